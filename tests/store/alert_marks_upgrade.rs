//! The upgrade to the alert check's marks on a database in use: the queue
//! rows there before get their task's horizon, and the marks the old
//! cursors imply (what the late check had passed was announced; what the
//! horizon check had passed likewise), so nothing is announced twice and
//! nothing the cursors had not reached is lost.

use chrono::Duration;
use diesel_async::SimpleAsyncConnection;
use remit::domain::{Region, TaskId};
use remit::store::Schedule;

use crate::support::{new_task, TestDb};

/// The marks' migrations, newest first, each with its own down.sql, and
/// the one since that changed the trigger they define (undone first, so
/// the schema left is one `migrate` brings back whole).
const UNDONE: &[(&str, &str)] = &[
    (
        "20261226000001",
        include_str!("../../migrations/postgres/2026-12-26-000001_finish_keeps_queue/down.sql"),
    ),
    (
        "20261225000006",
        include_str!(
            "../../migrations/postgres/2026-12-25-000006_drop_horizon_check_index/down.sql"
        ),
    ),
    (
        "20261225000005",
        include_str!("../../migrations/postgres/2026-12-25-000005_drop_late_check_index/down.sql"),
    ),
    (
        "20261225000004",
        include_str!("../../migrations/postgres/2026-12-25-000004_horizon_unseen_index/down.sql"),
    ),
    (
        "20261225000003",
        include_str!("../../migrations/postgres/2026-12-25-000003_late_index/down.sql"),
    ),
    (
        "20261225000002",
        include_str!("../../migrations/postgres/2026-12-25-000002_alert_marks_backfill/down.sql"),
    ),
    (
        "20261225000001",
        include_str!("../../migrations/postgres/2026-12-25-000001_alert_marks/down.sql"),
    ),
];

#[tokio::test]
async fn rows_from_before_get_their_horizon_and_the_marks_the_cursors_imply() {
    let db = TestDb::new().await;
    let mut conn = db.conn().await;
    for (version, down) in UNDONE {
        // An index dropped concurrently cannot run in a transaction.
        if down.contains("CONCURRENTLY") {
            conn.batch_execute(down).await.unwrap();
        } else {
            conn.batch_execute(&format!("BEGIN; {down}; COMMIT;"))
                .await
                .unwrap();
        }
        db.execute(&format!(
            "DELETE FROM __diesel_schema_migrations WHERE version = '{version}'"
        ))
        .await;
    }
    let crm = db.destination("crm", Region::EU).await;
    let now = chrono::Utc::now();
    let at = |reminder: &str, minutes: i64, horizon_minutes: i64| {
        let mut new = new_task(reminder, &crm, Region::EU);
        new.not_before = now + Duration::minutes(minutes);
        new.retry_horizon = Duration::minutes(horizon_minutes);
        new
    };
    let mut ids = std::collections::HashMap::<&str, TaskId>::new();
    for (name, minutes, horizon) in [
        ("passed", -120, 10),
        ("ahead", -30, 240),
        ("future", 1440, 60),
    ] {
        let id = db.store.schedule(at(name, minutes, horizon)).await.unwrap();
        ids.insert(name, id.task.id);
    }
    // The late cursor stood at "passed", the horizon cursor just past its
    // horizon (two hours ago, plus ten minutes).
    let passed = db.store.task(ids["passed"]).await.unwrap().unwrap();
    db.execute(&format!(
        "INSERT INTO destination_alerts (destination_id, region, late_checked_not_before, \
         late_checked_task) VALUES ('crm', 'eu', '{}', '{}')",
        passed.not_before.to_rfc3339(),
        passed.id
    ))
    .await;
    db.execute(&format!(
        "INSERT INTO region_alerts (region, horizon_checked_at, horizon_checked_task) \
         VALUES ('eu', '{}', 'ffffffff-ffff-ffff-ffff-ffffffffffff')",
        passed.retry_horizon_at.to_rfc3339()
    ))
    .await;

    // The first migration (the columns and the trigger) applied, and a
    // running process retrying "passed" before the backfill reaches it:
    // the trigger writes its row's horizon already.
    conn.batch_execute(&format!(
        "BEGIN; {}; COMMIT;",
        include_str!("../../migrations/postgres/2026-12-25-000001_alert_marks/up.sql")
    ))
    .await
    .unwrap();
    db.execute("INSERT INTO __diesel_schema_migrations (version) VALUES ('20261225000001')")
        .await;
    db.execute(&format!(
        "UPDATE tasks SET available_at = available_at + interval '1 second' WHERE id = '{}'",
        passed.id
    ))
    .await;

    remit::store::migrate(&db.url).await.unwrap();

    let marks = |name: &str| {
        format!(
            "SELECT count(*) AS n FROM task_queue q JOIN tasks t ON t.id = q.task_id \
             WHERE q.task_id = '{}' AND q.retry_horizon_at = t.retry_horizon_at",
            ids[name]
        )
    };
    for name in ["passed", "ahead", "future"] {
        assert_eq!(db.count(&marks(name)).await, 1, "{name} has its horizon");
    }
    let flags = |name: &str| {
        format!(
            "SELECT count(*) AS n FROM task_queue WHERE task_id = '{}' AND late_seen AND horizon_seen",
            ids[name]
        )
    };
    assert_eq!(
        db.count(&flags("passed")).await,
        1,
        "passed by both cursors"
    );
    let none = |name: &str| {
        format!(
            "SELECT count(*) AS n FROM task_queue WHERE task_id = '{}' \
             AND NOT late_seen AND NOT horizon_seen",
            ids[name]
        )
    };
    assert_eq!(db.count(&none("ahead")).await, 1, "ahead of both cursors");
    assert_eq!(db.count(&none("future")).await, 1);
    drop(conn);
}
