//! Retention on PostgreSQL beyond what the conformance cases check: a
//! pruning batch never waits on a row another session holds, and the
//! queue tables keep their room for updates and their vacuum settings.

use remit::store::{Leases, Upkeep};
use std::time::Duration as StdDuration;

use chrono::Duration;
use diesel_async::RunQueryDsl;
use remit::domain::{AttemptRecord, PruneRequest, Region};

use crate::support::{delivered, TestDb};

fn older_than_30_days() -> PruneRequest {
    PruneRequest {
        region: Some(Region::US),
        older_than: Duration::days(30),
        batch_size: 10,
    }
}

#[tokio::test]
async fn a_batch_skips_a_row_another_session_holds_instead_of_waiting() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    for r in ["a", "b", "c"] {
        db.task(r, &dest, Region::US).await;
    }
    for c in db.claim(Region::US, "us-1", 3).await {
        db.store
            .finish(
                &c.lease(),
                &c.task.destination_id,
                &delivered(AttemptRecord::default()),
            )
            .await
            .unwrap();
    }
    db.clock().advance(Duration::days(40));

    // What a late, fenced finish does while it logs against the task: it
    // holds a key-share lock on the row until it commits.
    let mut holder = db.conn().await;
    diesel::sql_query("BEGIN")
        .execute(&mut holder)
        .await
        .unwrap();
    diesel::sql_query("SELECT id FROM tasks WHERE reminder_id = 'b' FOR KEY SHARE")
        .execute(&mut holder)
        .await
        .unwrap();

    let report = tokio::time::timeout(
        StdDuration::from_secs(10),
        db.store.prune(&older_than_30_days()),
    )
    .await
    .expect("a batch does not wait on a held row")
    .unwrap();
    assert_eq!((report.tasks, report.batches), (2, 1));
    assert_eq!(
        db.count("SELECT count(*) AS n FROM tasks WHERE reminder_id = 'b'")
            .await,
        1
    );

    diesel::sql_query("ROLLBACK")
        .execute(&mut holder)
        .await
        .unwrap();
    let report = db.store.prune(&older_than_30_days()).await.unwrap();
    assert_eq!((report.tasks, report.attempts, report.payloads), (1, 1, 1));
    assert_eq!(db.count("SELECT count(*) AS n FROM tasks").await, 0);
    assert_eq!(db.count("SELECT count(*) AS n FROM payloads").await, 0);
}

#[tokio::test]
async fn the_queue_tables_leave_room_for_updates_and_keep_their_vacuum_settings() {
    let db = TestDb::new().await;
    let options = |table: &str, expected: &[&str]| {
        format!(
            "SELECT count(*) AS n FROM pg_class \
             WHERE relname = '{table}' AND relnamespace = current_schema()::regnamespace \
               AND reloptions @> ARRAY[{}]",
            expected
                .iter()
                .map(|o| format!("'{o}'"))
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    let tasks = [
        "fillfactor=50",
        "autovacuum_vacuum_scale_factor=0",
        "autovacuum_vacuum_threshold=20000",
        "autovacuum_vacuum_cost_delay=0",
    ];
    assert_eq!(db.count(&options("tasks", &tasks)).await, 1);
    assert_eq!(db.count(&options("task_queue", &tasks[1..])).await, 1);
    assert_eq!(
        db.count(&options("destinations", &["fillfactor=50"])).await,
        1
    );
}
