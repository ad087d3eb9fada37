//! One destination shared by tenants: a tenant with a deep backlog does
//! not hold up another tenant's reminders, and the destination receives its
//! configured rate in full while the backlog drains, with no seconds of
//! silence between bursts. On both stores.

use remit::store::Schedule;
use std::time::Duration;

use chrono::Utc;
use remit::domain::{DestinationId, NewTask, Payload, Region, ReminderId, TaskId, TenantId};

use crate::support::{self, Backend, Receiver, TestDb};

const RATE: f64 = 50.0;
const LIMITS: remit_actors::config::ThrottleLimits = remit_actors::config::ThrottleLimits {
    rate_per_second: RATE,
    burst: 10,
    max_in_flight: 8,
};

/// Schedules `n` tasks of `tenant`, all due a second ago, in batches.
async fn due_tasks(db: &TestDb, tenant: &str, n: usize, dest: &DestinationId) -> Vec<TaskId> {
    let due = Utc::now() - chrono::Duration::seconds(1);
    let mut ids = Vec::with_capacity(n);
    let all: Vec<usize> = (0..n).collect();
    for chunk in all.chunks(500) {
        let batch = chunk
            .iter()
            .map(|i| NewTask {
                tenant_id: TenantId::new(tenant).unwrap(),
                reminder_id: ReminderId::new(&format!("{tenant}-{i}")).unwrap(),
                destination_id: dest.clone(),
                region: Region::EU,
                not_before: due,
                retry_horizon: chrono::Duration::hours(1),
                payload: Payload::json(format!(r#"{{"tenant":"{tenant}","i":{i}}}"#)),
                ordering_key: None,
                traceparent: None,
            })
            .collect();
        for answer in db.store.schedule_many(batch).await.unwrap() {
            ids.push(answer.unwrap().task.id);
        }
    }
    ids
}

fn tenant_of(body: &[u8]) -> String {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap();
    value["tenant"].as_str().unwrap().to_owned()
}

#[actix_rt::test]
async fn a_small_tenant_goes_first_beside_a_large_backlog_on_postgres() {
    small_tenant_beside_a_backlog(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_small_tenant_goes_first_beside_a_large_backlog_on_sqlite() {
    small_tenant_beside_a_backlog(Backend::Sqlite).await;
}

async fn small_tenant_beside_a_backlog(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "sms", Region::EU, &receiver.url("/hook"), None).await;
    // The large tenant's rows are older, and first in every index order.
    due_tasks(&db, "a-clinic", 3_000, &dest).await;
    due_tasks(&db, "b-clinic", 20, &dest).await;
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.throttle.destinations.insert("sms".into(), LIMITS);
    let runtime = support::start(config, &db.store).await;

    receiver
        .wait_until(Duration::from_secs(2), "b-clinic's 20 reminders", |log| {
            log.iter()
                .filter(|r| tenant_of(&r.body) == "b-clinic")
                .count()
                == 20
        })
        .await;
    let log = receiver.requests_to("/hook");
    runtime.shutdown().await;

    // A was not starved meanwhile: it kept receiving while B's were pending.
    let last_b = log
        .iter()
        .rposition(|r| tenant_of(&r.body) == "b-clinic")
        .unwrap();
    let a_before_last_b = log[..last_b]
        .iter()
        .filter(|r| tenant_of(&r.body) == "a-clinic")
        .count();
    assert!(
        a_before_last_b >= 10,
        "a-clinic got {a_before_last_b} sends while b-clinic's were pending"
    );
}

#[actix_rt::test]
async fn a_backlog_receives_the_full_rate_without_silences_on_postgres() {
    full_rate_without_silences(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_backlog_receives_the_full_rate_without_silences_on_sqlite() {
    full_rate_without_silences(Backend::Sqlite).await;
}

/// Long enough for the throttle to have handed work back and claimed it
/// again several times (a hold is 2 s with the tests' 10 s lease).
const MEASURED: Duration = Duration::from_secs(6);

async fn full_rate_without_silences(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "sms", Region::EU, &receiver.url("/hook"), None).await;
    // More than the measured span can send, so the backlog never runs out.
    let backlog = (RATE * MEASURED.as_secs_f64() * 2.0) as usize;
    due_tasks(&db, "a-clinic", backlog, &dest).await;
    let mut config = support::config(&db, Region::EU, "eu-1");
    // The defaults' lease and send timeout, as where the silences were seen.
    config.lease.seconds = 30;
    config.send.timeout_ms = 10_000;
    config.throttle.destinations.insert("sms".into(), LIMITS);
    let runtime = support::start(config, &db.store).await;

    // The first request starts the measured span; the span ends once the
    // receiver has seen the rate's worth of it, or when it is over.
    receiver
        .wait_until(Duration::from_secs(5), "the first request", |log| {
            !log.is_empty()
        })
        .await;
    let wanted = (RATE * MEASURED.as_secs_f64()) as usize;
    let deadline = std::time::Instant::now() + MEASURED + Duration::from_secs(2);
    while receiver.requests().len() <= wanted && std::time::Instant::now() < deadline {
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    let log = receiver.requests_to("/hook");
    runtime.shutdown().await;

    let first = log[0].at;
    let span = chrono::Duration::from_std(MEASURED).unwrap();
    let mut times: Vec<_> = log
        .iter()
        .map(|r| r.at)
        .filter(|t| *t < first + span)
        .collect();
    times.sort();
    let floor = (RATE * MEASURED.as_secs_f64() * 0.8) as usize;
    assert!(
        times.len() >= floor,
        "{} requests in {MEASURED:?} at {RATE}/s; at least {floor} expected",
        times.len()
    );
    let widest = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default();
    assert!(
        widest < chrono::Duration::milliseconds(500),
        "a silence of {widest} between requests"
    );
}
