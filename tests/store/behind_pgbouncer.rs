//! The store behind PgBouncer 1.18 in transaction mode, started by the
//! test (`pgbouncer.rs`): every call works with `database.pooler =
//! "transaction"`, and a pooler remit was not told of is named at once.

use remit::store::{
    ClaimRequest, Database, DatabaseConfig, Destinations, Finish, Leases, Pooler, Reports,
    Schedule, TransitionOutcome, Upkeep, Wakeups,
};
use std::time::{Duration, Instant};

use chrono::Utc;
use remit::domain::{AttemptRecord, DestinationId, NewDestination, Region, TaskState};
use remit::policy::{Decision, Transition};
use remit::store::console::TaskFilter;

use crate::pgbouncer::PgBouncer;
use crate::support::{new_task, test_key};

pub(crate) fn behind(bouncer: &PgBouncer, direct: bool) -> DatabaseConfig {
    let mut config = DatabaseConfig::new(bouncer.url.clone());
    config.pool_size = 8;
    config.pooler = Pooler::Transaction;
    config.direct_url = direct.then(|| bouncer.direct_url.clone());
    config
}

pub(crate) async fn connect(bouncer: &PgBouncer, config: &DatabaseConfig) -> Database {
    Database::connect(config, test_key())
        .await
        .unwrap_or_else(|e| panic!("{}\n{}", remit::error_chain(&e), bouncer.log()))
}

/// The destination `hook` on `store`, with `tasks` reminders scheduled.
pub(crate) async fn hook_with_tasks(store: &Database, tasks: usize) -> DestinationId {
    let hook = DestinationId::new("hook").unwrap();
    store
        .add_destination(
            NewDestination::new(hook.clone(), Region::EU, "http://127.0.0.1:9/hook", None).unwrap(),
        )
        .await
        .unwrap();
    for n in 0..tasks {
        store
            .schedule(new_task(&format!("r{n}"), &hook, Region::EU))
            .await
            .unwrap();
    }
    hook
}

/// Eight workers at once, each scheduling, claiming, finishing (delivered
/// and retried) and reading, through a pooler with two server
/// connections: no call fails, and the ENUMs read back are the states
/// written.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_call_works_through_a_transaction_pooler() {
    const WORKERS: usize = 8;
    const ROUNDS: usize = 12;
    const BATCH: usize = 4;
    let Some(bouncer) = PgBouncer::start("").await else {
        return;
    };
    remit::store::migrate(&bouncer.direct_url).await.unwrap();
    let store = connect(&bouncer, &behind(&bouncer, true)).await;
    let hook = hook_with_tasks(&store, 0).await;

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let store = store.clone();
            let hook = hook.clone();
            tokio::spawn(async move {
                let mut finished = Vec::new();
                for round in 0..ROUNDS {
                    let batch = (0..BATCH)
                        .map(|i| new_task(&format!("w{w}-r{round}-{i}"), &hook, Region::EU))
                        .collect();
                    for scheduled in store.schedule_many(batch).await? {
                        assert!(scheduled?.created);
                    }
                    let claimed = store
                        .claim_due(&ClaimRequest {
                            region: Region::EU,
                            lease_owner: format!("w{w}"),
                            lease: chrono::Duration::seconds(30),
                            limit: BATCH as u32,
                            per_destination_cap: BATCH as u32,
                            caps: Vec::new(),
                            skip: Vec::new(),
                            resume_after: None,
                        })
                        .await?;
                    let finishes: Vec<Finish> = claimed
                        .iter()
                        .enumerate()
                        .map(|(i, claimed)| {
                            let transition = if i % 2 == 0 {
                                Transition::Deliver
                            } else {
                                Transition::RetryWait {
                                    available_at: Utc::now() + chrono::Duration::hours(1),
                                }
                            };
                            Finish {
                                lease: claimed.lease(),
                                destination: hook.clone(),
                                decision: Decision {
                                    transition,
                                    pause_destination_until: None,
                                    record: AttemptRecord {
                                        http_status: Some(if i % 2 == 0 { 200 } else { 503 }),
                                        ..AttemptRecord::default()
                                    },
                                },
                            }
                        })
                        .collect();
                    let outcomes = store.finish_many(&finishes).await?.outcomes;
                    assert!(outcomes.iter().all(|o| *o == TransitionOutcome::Applied));
                    for (i, claimed) in claimed.iter().enumerate() {
                        let expected = if i % 2 == 0 {
                            TaskState::Delivered
                        } else {
                            TaskState::RetryWait
                        };
                        finished.push((claimed.task.id, expected));
                    }
                    store.status(Some(Region::EU)).await?;
                    store
                        .search_tasks(Region::EU, &TaskFilter::default(), None, 20)
                        .await?;
                }
                Ok::<_, remit::store::StoreError>(finished)
            })
        })
        .collect();
    let mut finished = Vec::new();
    for worker in workers {
        match worker.await.unwrap() {
            Ok(mine) => finished.extend(mine),
            Err(e) => panic!("{}\n{}", remit::error_chain(&e), bouncer.log()),
        }
    }
    assert!(!finished.is_empty(), "nothing was claimed");
    for (id, expected) in finished {
        let task = store.task(id).await.unwrap().unwrap();
        assert_eq!(task.state, expected, "{id:?}");
        let attempts = store.attempts(id).await.unwrap();
        assert_eq!(attempts.len(), 1, "{id:?}");
    }
    let status = store.status(Some(Region::EU)).await.unwrap();
    assert!(format!("{status:?}").contains("delivered"), "{status:?}");
}

/// Wake-ups come over the direct URL; without one, behind a transaction
/// pooler, there is no LISTEN at all (it would answer OK and never hear a
/// thing), and the process is told it hears no other process.
#[tokio::test]
async fn listen_goes_to_postgresql_itself_or_nowhere() {
    let Some(bouncer) = PgBouncer::start("").await else {
        return;
    };
    remit::store::migrate(&bouncer.direct_url).await.unwrap();

    let store = connect(&bouncer, &behind(&bouncer, true)).await;
    let wakeups = Wakeups::connect(&store).await.unwrap();
    assert!(wakeups.reaches_every_process() && !wakeups.polling_only() && !wakeups.deaf());

    let store = connect(&bouncer, &behind(&bouncer, false)).await;
    let mut wakeups = Wakeups::connect(&store).await.unwrap();
    assert!(!wakeups.reaches_every_process() && wakeups.polling_only());
    wakeups.ping(Duration::from_millis(100)).await.unwrap();
}

/// Without `database.pooler`, PgBouncer refuses the session settings
/// remit asks for at connect: the store says so within a second, naming
/// what to set.
#[tokio::test]
async fn a_pooler_remit_was_not_told_of_is_named_at_once() {
    let Some(bouncer) = PgBouncer::start("").await else {
        return;
    };
    remit::store::migrate(&bouncer.direct_url).await.unwrap();
    let started = Instant::now();
    let refused = Database::connect(&DatabaseConfig::new(bouncer.url.clone()), test_key())
        .await
        .unwrap_err();
    let said = remit::error_chain(&refused);
    assert!(started.elapsed() < remit_testkit::db::FAILS_FAST, "{said}");
    assert!(
        said.contains("unsupported startup parameter: options")
            && said.contains("database.pooler")
            && said.contains("database.direct_url"),
        "{said}"
    );

    // A pooler told to drop what it does not support accepts the
    // connection but not the settings: the store notices all the same, from
    // a value the startup packet asked for that no role can supply.
    let Some(ignoring) = PgBouncer::start("ignore_startup_parameters = options").await else {
        return;
    };
    remit::store::migrate(&ignoring.direct_url).await.unwrap();
    let started = Instant::now();
    let refused = Database::connect(&DatabaseConfig::new(ignoring.url.clone()), test_key())
        .await
        .unwrap_err();
    let said = remit::error_chain(&refused);
    assert!(started.elapsed() < remit_testkit::db::FAILS_FAST, "{said}");
    for named in [
        "remit.connect_nonce",
        "ignore_startup_parameters",
        "database.pooler",
        "database.direct_url",
    ] {
        assert!(said.contains(named), "{named}: {said}");
    }
    // Not once, at start: every new connection is checked (bb8 opens the
    // pool's later ones through the same connector).
    let connector = remit::store::PgConnector::new(&ignoring.url, Duration::from_secs(5)).unwrap();
    for _ in 0..3 {
        let refused = connector.establish().await.map(drop).unwrap_err();
        assert!(
            remit::error_chain(&refused).contains("remit.connect_nonce"),
            "{}",
            remit::error_chain(&refused)
        );
    }
    // PostgreSQL itself passes the same check.
    remit::store::PgConnector::new(&ignoring.direct_url, Duration::from_secs(5))
        .unwrap()
        .establish()
        .await
        .unwrap();
}

/// A LISTEN through a pooler that hands out a server per transaction
/// (here one told to remit as a session pooler) answers OK and hears no
/// other session: it is not trusted to hear every process, since it never
/// heard the NOTIFY another connection sent.
#[tokio::test]
async fn a_listen_that_hears_no_other_session_is_not_trusted() {
    let Some(bouncer) = PgBouncer::start_in("transaction", 1, "").await else {
        return;
    };
    remit::store::migrate(&bouncer.direct_url).await.unwrap();
    let mut config = DatabaseConfig::new(bouncer.url.clone());
    config.pooler = Pooler::Session;
    config.pool_size = 1;
    let store = connect(&bouncer, &config).await;
    let started = Instant::now();
    let wakeups = Wakeups::connect(&store).await.unwrap();
    assert!(!wakeups.reaches_every_process() && wakeups.deaf());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

/// A session pooler keeps a server for each client session: named
/// statements and LISTEN work through it, so remit only stops asking for
/// settings at connect.
#[tokio::test]
async fn a_session_pooler_carries_named_statements_and_listen() {
    let Some(bouncer) = PgBouncer::start_in("session", 8, "").await else {
        return;
    };
    remit::store::migrate(&bouncer.direct_url).await.unwrap();
    let mut config = DatabaseConfig::new(bouncer.url.clone());
    config.pool_size = 4;
    config.pooler = Pooler::Session;
    let store = connect(&bouncer, &config).await;
    let mut wakeups = Wakeups::connect(&store).await.unwrap();
    assert!(wakeups.reaches_every_process());
    hook_with_tasks(&store, 20).await;
    // The schedules' notifications came through the pooler.
    let heard = tokio::time::timeout(Duration::from_secs(5), wakeups.next())
        .await
        .expect("no wake-up within 5 s")
        .unwrap();
    assert!(
        matches!(heard, remit::store::Wakeup::DueWork(r) if r == Region::EU),
        "{heard:?}"
    );
    store.status(Some(Region::EU)).await.unwrap();
}

/// The reports' read URL behind a transaction pooler (a replica behind
/// PgBouncer; here the primary itself, which a read URL may name): with
/// the pooler said, every report reads through it, over both of its
/// server connections; without, the pooler is named at once.
#[tokio::test]
async fn the_reports_read_through_a_transaction_pooler() {
    let Some(bouncer) = PgBouncer::start("").await else {
        return;
    };
    remit::store::migrate(&bouncer.direct_url).await.unwrap();
    let store = connect(&bouncer, &DatabaseConfig::new(bouncer.direct_url.clone())).await;
    hook_with_tasks(&store, 3).await;

    let reports = store
        .reading_from(&bouncer.url, 4, Pooler::Transaction)
        .await
        .unwrap_or_else(|e| panic!("{}\n{}", remit::error_chain(&e), bouncer.log()));
    let reads: Vec<_> = (0..8)
        .map(|_| {
            let reports = reports.clone();
            tokio::spawn(async move {
                let status = reports.status(Some(Region::EU)).await?;
                let found = reports
                    .search_tasks(Region::EU, &TaskFilter::default(), None, 20)
                    .await?
                    .tasks;
                reports.read_source().await?;
                Ok::<_, remit::store::StoreError>((status.regions[0].pending, found.len()))
            })
        })
        .collect();
    for read in reads {
        let read = read.await.unwrap();
        let (pending, found) = read.unwrap_or_else(|e| panic!("{}", remit::error_chain(&e)));
        assert_eq!((pending, found), (3, 3));
    }

    let refused = store
        .reading_from(&bouncer.url, 1, Pooler::None)
        .await
        .unwrap_err();
    let said = remit::error_chain(&refused);
    assert!(
        said.contains("unsupported startup parameter: options") && said.contains("database.pooler"),
        "{said}"
    );
}

/// A new connection's warm-up behind a transaction pooler closes only the
/// statements it prepared itself: another client's prepared statement on
/// the same server (PgBouncer with one server connection) still runs
/// after it.
#[tokio::test]
async fn a_warm_up_leaves_other_clients_statements_alone() {
    use diesel_async::SimpleAsyncConnection as _;
    let Some(bouncer) = PgBouncer::start_in("transaction", 1, "").await else {
        return;
    };
    remit::store::migrate(&bouncer.direct_url).await.unwrap();
    // Another application's client: plain, asking for nothing at connect.
    let mut other =
        <diesel_async::AsyncPgConnection as diesel_async::AsyncConnection>::establish(&bouncer.url)
            .await
            .unwrap();
    other
        .batch_execute("PREPARE other_clients_statement AS SELECT 1")
        .await
        .unwrap();
    let mut config = behind(&bouncer, true);
    config.pool_size = 2;
    let store = connect(&bouncer, &config).await;
    store.ping().await.unwrap();
    other
        .batch_execute("EXECUTE other_clients_statement")
        .await
        .unwrap_or_else(|e| panic!("the other client's statement is gone: {e}"));
}
