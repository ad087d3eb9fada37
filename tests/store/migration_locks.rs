//! `remit migrate` on a live database with a long transaction in a
//! migration's way: each try gives its lock up within a second, so the
//! claims and finishes queued behind it go on; it tries again, naming the session in
//! the way, and applies the migration once that session has ended, or
//! gives up naming it, with nothing of the migration written.

use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection as _};
use remit::domain::Region;
use remit::store::{AfterWait, LockPatience, LockWait};

use crate::support::TestDb;

/// The migration put back to pending: it adds a column to `destinations`,
/// which every claim reads and every token take writes, so its lock waits
/// for every transaction that has read the table.
const PENDING: &str = "20261224000001";

/// The newest migrations undone (each one's own down.sql, newest first),
/// so that `PENDING` and those after it are to be applied again.
const UNDONE: &[(&str, &str)] = &[
    (
        "20261224000004",
        include_str!("../../migrations/postgres/2026-12-24-000004_retrying_index/down.sql"),
    ),
    (
        "20261224000003",
        include_str!("../../migrations/postgres/2026-12-24-000003_task_failures_backfill/down.sql"),
    ),
    (
        "20261224000002",
        include_str!("../../migrations/postgres/2026-12-24-000002_task_failures/down.sql"),
    ),
    (
        PENDING,
        include_str!("../../migrations/postgres/2026-12-24-000001_last_error_at/down.sql"),
    ),
];

async fn undo_newest_migrations(db: &TestDb) {
    let mut conn = db.conn().await;
    for (version, down) in UNDONE {
        conn.batch_execute(&format!("BEGIN; {down}; COMMIT;"))
            .await
            .unwrap();
        db.execute(&format!(
            "DELETE FROM __diesel_schema_migrations WHERE version = '{version}'"
        ))
        .await;
    }
}

/// A session that read `destinations` and left its transaction open, as a
/// long report or a forgotten psql does.
async fn open_transaction_on_destinations(db: &TestDb) -> AsyncPgConnection {
    let mut conn = db.conn().await;
    conn.batch_execute(
        "SET application_name = 'nightly-batch'; BEGIN; \
         SELECT count(*) FROM destinations;",
    )
    .await
    .unwrap();
    conn
}

/// `remit migrate` of `db` under way, and each wait it tells of.
fn migrate_in_the_background(
    db: &TestDb,
    patience: LockPatience,
) -> (
    tokio::task::JoinHandle<Result<Vec<String>, remit::store::StoreError>>,
    tokio::sync::mpsc::UnboundedReceiver<LockWait>,
) {
    let (told, waits) = tokio::sync::mpsc::unbounded_channel::<LockWait>();
    let url = db.url.clone();
    let migrating = tokio::spawn(async move {
        let tell = Arc::new(move |wait: &LockWait| {
            let _ = told.send(wait.clone());
        });
        remit::store::migrate_patiently(&url, patience, tell).await
    });
    (migrating, waits)
}

async fn applied(db: &TestDb, version: &str) -> bool {
    db.count(&format!(
        "SELECT count(*) AS n FROM __diesel_schema_migrations WHERE version = '{version}'"
    ))
    .await
        == 1
}

#[tokio::test]
async fn a_migration_behind_a_long_transaction_lets_writes_through_then_applies() {
    let db = TestDb::new().await;
    db.destination("crm", Region::EU).await;
    undo_newest_migrations(&db).await;
    let mut batch = open_transaction_on_destinations(&db).await;

    let (migrating, mut waits) = migrate_in_the_background(
        &db,
        LockPatience {
            give_up_after: Duration::from_secs(60),
            ..LockPatience::default()
        },
    );

    // A claim's read of `destinations`, over and over while the migration
    // tries twice: a read queued behind a try waits at most for that try's
    // lock timeout. (Waiting for the batch instead, it would run into the
    // statement timeout and fail the test.)
    let mut reader = db.conn().await;
    reader
        .batch_execute("SET statement_timeout = '4s'")
        .await
        .unwrap();
    let started = Instant::now();
    let mut told = Vec::new();
    let mut longest = Duration::ZERO;
    while told.len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(30), "{told:?}");
        let read = Instant::now();
        diesel::sql_query("SELECT count(*) FROM destinations")
            .execute(&mut reader)
            .await
            .expect("claims go on while the migration waits");
        longest = longest.max(read.elapsed());
        while let Ok(wait) = waits.try_recv() {
            told.push(wait);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!migrating.is_finished(), "applied past an open transaction");
    println!("longest read while the migration tried: {longest:?}");
    // A try's lock timeout is a second; what is over it is this machine's
    // load, not a try that queued the read for longer.
    assert!(
        longest < Duration::from_secs(3),
        "a read waited {longest:?}"
    );
    // The session holding the migration lock (remit migrate's advisory
    // lock, 0x7265_6d69_745f_6d67, as its two halves) is named.
    let named = db
        .count(
            "SELECT count(*) AS n FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid \
             WHERE l.locktype = 'advisory' AND l.granted \
               AND l.classid = x'72656d69'::int::oid AND l.objid = x'745f6d67'::int::oid \
               AND a.application_name = 'remit migrate'",
        )
        .await;
    assert_eq!(named, 1, "the migrating session is named");

    let first_wait = &told[0];
    assert_eq!(first_wait.migration, PENDING);
    assert!(
        matches!(first_wait.next, AfterWait::TryAgain { tries: 1, .. }),
        "{first_wait:?}"
    );
    assert!(
        first_wait
            .holders
            .iter()
            .any(|h| h.application == "nightly-batch"
                && h.state.as_deref() == Some("idle in transaction")),
        "{first_wait}"
    );
    assert!(
        first_wait.to_string().contains("\"nightly-batch\""),
        "{first_wait}"
    );

    batch.batch_execute("ROLLBACK").await.unwrap();
    let versions = tokio::time::timeout(Duration::from_secs(60), migrating)
        .await
        .expect("applied within a minute of the batch's end")
        .unwrap()
        .expect("applied once the batch ended");
    assert!(versions.starts_with(&[PENDING.to_owned()]), "{versions:?}");
    for (version, _) in UNDONE {
        assert!(applied(&db, version).await, "{version} applied");
    }
}

#[tokio::test]
async fn a_migration_gives_up_naming_the_transaction_in_its_way() {
    let db = TestDb::new().await;
    undo_newest_migrations(&db).await;
    let _batch = open_transaction_on_destinations(&db).await;

    let patience = LockPatience {
        give_up_after: Duration::from_secs(2),
        ..LockPatience::default()
    };
    let error = remit::store::migrate_patiently(&db.url, patience, Arc::new(|_| {}))
        .await
        .expect_err("gave up");
    let message = remit::error_chain(&error);
    for expected in [
        PENDING,
        "\"nightly-batch\"",
        "idle in transaction",
        "end those transactions",
    ] {
        assert!(message.contains(expected), "{expected}: {message}");
    }
    // Rolled back whole: neither its column nor its record.
    assert!(!applied(&db, PENDING).await);
    assert_eq!(
        db.count(
            "SELECT count(*) AS n FROM information_schema.columns \
             WHERE table_name = 'destinations' AND column_name = 'last_error_at' \
               AND table_schema = current_schema()"
        )
        .await,
        0
    );
}

/// An index built concurrently waits for every transaction that holds a
/// write lock on its table, blocking no one meanwhile: it is not timed out, and `remit
/// migrate` says whom it waits for until they end.
#[tokio::test]
async fn an_index_build_names_the_transaction_it_waits_for_and_outlasts_it() {
    let db = TestDb::new().await;
    undo_newest_migrations(&db).await;
    let mut batch = db.conn().await;
    batch
        .batch_execute(
            "SET application_name = 'queue-batch'; BEGIN; \
             UPDATE task_queue SET retrying = retrying WHERE false;",
        )
        .await
        .unwrap();

    let (migrating, mut waits) = migrate_in_the_background(
        &db,
        LockPatience {
            give_up_after: Duration::from_secs(1),
            report_every: Duration::from_millis(200),
        },
    );
    // Until the build has waited past `give_up_after`, and goes on.
    let waiting = loop {
        let told = tokio::time::timeout(Duration::from_secs(60), waits.recv())
            .await
            .expect("the build's wait was told");
        let Some(wait) = told else {
            panic!("the migration ended: {:?}", migrating.await);
        };
        if let AfterWait::KeepWaiting { waited } = wait.next {
            if waited > Duration::from_millis(1500) {
                break wait;
            }
        }
    };
    assert_eq!(waiting.migration, "20261224000004");
    assert!(
        waiting
            .holders
            .iter()
            .any(|h| h.application == "queue-batch"),
        "{waiting}"
    );
    assert!(
        waiting.to_string().contains("blocks no claim or finish"),
        "{waiting}"
    );
    assert!(!migrating.is_finished(), "the build ended before the batch");

    batch.batch_execute("ROLLBACK").await.unwrap();
    let versions = tokio::time::timeout(Duration::from_secs(60), migrating)
        .await
        .expect("built within a minute of the batch's end")
        .unwrap()
        .expect("built once the batch ended");
    assert!(
        versions.contains(&"20261224000004".to_owned()),
        "{versions:?}"
    );
    assert_eq!(
        db.count(
            "SELECT count(*) AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
             WHERE c.relname = 'task_queue_retrying' AND i.indisvalid \
               AND c.relnamespace = current_schema()::regnamespace"
        )
        .await,
        1
    );
}
