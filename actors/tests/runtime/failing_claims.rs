//! A claim that keeps failing (here: a trigger that refuses every update of
//! `tasks`, as a full disk or a poison row would) is retried with growing
//! backoff, whatever asks for the next claim, and on PostgreSQL over the one
//! LISTEN connection the runtime opened at start; once the database accepts
//! claims again the work goes out.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};
use remit::store::{Database, DatabaseConfig};
use remit_actors::runtime::RuntimeStats;

use crate::support::{self, Backend, Receiver, TestDb};

/// How long claims fail. With the tests' 10 ms busy interval the backoff
/// doubles from 20 ms: about seven attempts in this window.
const FAILING: Duration = Duration::from_millis(1_500);

#[actix_rt::test]
async fn failing_claims_back_off_over_one_listen_session_on_postgres() {
    failing_claims_back_off(Backend::Postgres).await;
}

#[actix_rt::test]
async fn failing_claims_back_off_on_sqlite() {
    failing_claims_back_off(Backend::Sqlite).await;
}

async fn failing_claims_back_off(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let task = support::task(&db, "r1", &dest, Region::EU).await;
    match backend {
        Backend::Postgres => {
            db.execute(
                "CREATE FUNCTION refuse_claims() RETURNS trigger LANGUAGE plpgsql AS \
                 $$ BEGIN RAISE EXCEPTION 'claims refused'; END $$",
            )
            .await;
            db.execute(
                "CREATE TRIGGER refuse_claims BEFORE UPDATE ON tasks \
                 FOR EACH ROW EXECUTE FUNCTION refuse_claims()",
            )
            .await;
        }
        Backend::Sqlite => {
            db.execute(
                "CREATE TRIGGER refuse_claims BEFORE UPDATE ON tasks \
                 BEGIN SELECT RAISE(ABORT, 'claims refused'); END",
            )
            .await;
        }
    }
    // A name of its own, so this runtime's sessions can be told apart.
    let name = format!("remit_claims_{}", uuid::Uuid::new_v4().simple());
    let url = match backend {
        Backend::Postgres => format!("{}&application_name={name}", db.url),
        Backend::Sqlite => db.url.clone(),
    };
    let store = Database::connect(&DatabaseConfig::new(url), support::db::test_key())
        .await
        .unwrap();
    let config = support::config(&db, Region::EU, "eu-1");
    let runtime = support::start(config, &store).await;

    let started = Instant::now();
    let mut listeners = HashSet::new();
    while started.elapsed() < FAILING {
        if backend == Backend::Postgres {
            let pid = db
                .count(&format!(
                    "SELECT coalesce(max(pid), 0)::bigint AS n FROM pg_stat_activity \
                     WHERE application_name = '{name}' AND query LIKE 'LISTEN%'"
                ))
                .await;
            if pid != 0 {
                listeners.insert(pid);
            }
        }
        actix_rt::time::sleep(Duration::from_millis(25)).await;
    }
    let attempts = RuntimeStats::read(&runtime.stats().restarts);
    eprintln!(
        "{backend:?}: {attempts} failed claims and {} LISTEN sessions in {FAILING:?}",
        listeners.len()
    );
    // At least one: the trigger refused claims. At most a dozen: the
    // claimer backed off (without it, dozens to hundreds in this window).
    assert!(
        (1..=12).contains(&attempts),
        "{attempts} failed claims in {FAILING:?}: the claimer did not back off"
    );
    if backend == Backend::Postgres {
        assert_eq!(listeners.len(), 1, "LISTEN sessions: {listeners:?}");
    }

    db.execute(match backend {
        Backend::Postgres => "DROP TRIGGER refuse_claims ON tasks",
        Backend::Sqlite => "DROP TRIGGER refuse_claims",
    })
    .await;
    support::wait_for_state(&db, &[task], TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;
    assert_eq!(receiver.requests_to("/hook").len(), 1);
}
