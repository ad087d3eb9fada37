//! Ordering lines hold under concurrent claims on PostgreSQL. Each claim
//! decides from its own snapshot; here one claim of a line's head is left
//! uncommitted (its transaction open, as a claim still running would be),
//! a task with an earlier `not_before` is scheduled into the line, and a
//! second claim runs meanwhile. Its snapshot shows the newcomer as the
//! line's head and the old head untouched, so without the line's
//! compare-and-set it would lease the newcomer beside the head. It must
//! wait for the first claim and leave the line alone.

use chrono::Duration;
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text, Timestamptz};
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use remit::domain::{NewTask, OrderingKey, Region, TaskState};
use remit::store::{hot_path_sql, Leases, Schedule, Upkeep};

use crate::support::{claim, new_task, t0, TestDb};

#[derive(diesel::QueryableByName)]
struct Pid {
    #[diesel(sql_type = Integer)]
    pid: i32,
}

#[tokio::test]
async fn a_line_never_has_two_tasks_leased_whatever_commits_between_claims() {
    let db = TestDb::new().await;
    let d = db.destination("crm", Region::EU).await;
    let key = OrderingKey::new("patient-1").unwrap();
    let in_line = |reminder: &str, not_before| NewTask {
        not_before,
        ordering_key: Some(key.clone()),
        ..new_task(reminder, &d, Region::EU)
    };
    let head = db
        .store
        .schedule(in_line("r1", t0()))
        .await
        .unwrap()
        .task
        .id;

    // The first claim, left running: its transaction holds the head.
    let mut first = db.conn().await;
    first.batch_execute("BEGIN").await.unwrap();
    let first_pid = diesel::sql_query("SELECT pg_backend_pid() AS pid")
        .get_result::<Pid>(&mut first)
        .await
        .unwrap()
        .pid;
    let taken = diesel::sql_query(hot_path_sql::claim())
        .bind::<Nullable<Timestamptz>, _>(Some(t0()))
        .bind::<Text, _>("eu")
        .bind::<Text, _>("first")
        .bind::<BigInt, _>(30_000)
        .bind::<Integer, _>(10)
        .bind::<Integer, _>(10)
        .bind::<Array<Text>, _>(Vec::<String>::new())
        .bind::<Text, _>("")
        .bind::<Text, _>("")
        .bind::<Array<Text>, _>(Vec::<String>::new())
        .bind::<Array<Integer>, _>(Vec::<i32>::new())
        .execute(&mut first)
        .await
        .unwrap();
    assert_eq!(taken, 1, "the first claim takes the head");

    // Meanwhile a task due earlier joins the line, and commits.
    let newcomer = db
        .store
        .schedule(in_line("r0", t0() - Duration::hours(1)))
        .await
        .unwrap()
        .task
        .id;

    // A second claim, from another process.
    let store = db.store.clone();
    let second =
        tokio::spawn(async move { store.claim_due(&claim(Region::EU, "second", 10)).await });
    // It either waits on the first claim (the line's row) or has finished.
    let blocked = format!(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE {first_pid} = ANY(pg_blocking_pids(pid))"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !second.is_finished() && db.count(&blocked).await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the second claim neither waited nor ended"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    first.batch_execute("COMMIT").await.unwrap();
    let second: Vec<_> = second
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|c| c.task.id)
        .collect();
    assert!(
        second.is_empty(),
        "the second claim took {second:?} beside the head"
    );

    let mut leased = 0;
    for id in [head, newcomer] {
        if db.store.task(id).await.unwrap().unwrap().state == TaskState::Leased {
            leased += 1;
        }
    }
    assert_eq!(leased, 1, "one task of the line out at a time");
}

/// A line with no live task left has its row pruned with the region's old
/// tasks, so lines keyed per event do not grow the table without end; its
/// next task makes the row anew, with a version never used before.
#[tokio::test]
async fn an_idle_lines_row_is_pruned_and_made_anew() {
    let db = TestDb::new().await;
    let d = db.destination("crm", Region::EU).await;
    let in_line = |reminder: &str, key: &str| NewTask {
        not_before: t0(),
        ordering_key: Some(OrderingKey::new(key).unwrap()),
        ..new_task(reminder, &d, Region::EU)
    };
    db.store.schedule(in_line("done", "event-1")).await.unwrap();
    db.store.schedule(in_line("live", "event-2")).await.unwrap();
    let claimed = db
        .store
        .claim_due(&claim(Region::EU, "c", 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    let done = claimed
        .iter()
        .find(|c| c.task.reminder_id.as_str() == "done")
        .unwrap();
    db.store
        .finish(
            &done.lease(),
            &d,
            &crate::support::delivered(remit::domain::AttemptRecord {
                http_status: Some(200),
                ..Default::default()
            }),
        )
        .await
        .unwrap();
    let lines = "SELECT count(*) AS n FROM ordering_lines";
    assert_eq!(db.count(lines).await, 2);
    let versions = "SELECT coalesce(max(version), 0) AS n FROM ordering_lines";
    let before = db.count(versions).await;

    let request = remit::domain::PruneRequest {
        region: Some(Region::EU),
        older_than: Duration::days(30),
        batch_size: 100,
    };
    db.store.prune(&request).await.unwrap();
    assert_eq!(
        db.count(lines).await,
        1,
        "the idle line's row went, the live one's stayed"
    );
    assert_eq!(
        db.count("SELECT count(*) AS n FROM ordering_lines WHERE ordering_key = 'event-2'")
            .await,
        1
    );

    // Its key again: the row is made anew, past every version there was.
    db.store
        .schedule(in_line("again", "event-1"))
        .await
        .unwrap();
    let claimed = db
        .store
        .claim_due(&claim(Region::EU, "c", 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    assert!(
        db.count("SELECT min(version) AS n FROM ordering_lines WHERE ordering_key = 'event-1'")
            .await
            > before
    );
}
