//! On PostgreSQL the claim finds work in `task_queue` and the reports find
//! ends in `task_ends`; triggers on `tasks` keep both. Here every kind of
//! write a task row gets (schedule, claim, delivery, retry, failure,
//! abandon, hand-back, extension, replay, reconciliation's reclaim,
//! retention, a hand edit) is made through the store, and after each one
//! the two tables say exactly what `tasks` says.

use chrono::Duration;
use remit::domain::{AttemptRecord, FailureReason, PruneRequest, ReconcileRequest, Region};
use remit::store::{Finish, Leases, Schedule, TransitionOutcome, Upkeep};

use crate::support::{delivered, new_task, retry_at, t0, TestDb};

/// Rows of `tasks` not yet ended that `task_queue` lacks or holds with
/// other keys, rows of `task_queue` with no such task, rows whose retry
/// mark disagrees with the task's state, and ended tasks without an end
/// row of their own `finalized_at`.
async fn disagreements(db: &TestDb) -> i64 {
    db.count(
        "SELECT (
           (SELECT count(*) FROM (
              SELECT id, region, destination_id, tenant_id, available_at, not_before, ordering_key
              FROM tasks WHERE finalized_at IS NULL
              EXCEPT
              SELECT task_id, region, destination_id, tenant_id, available_at, not_before,
                     ordering_key
              FROM task_queue) missing)
         + (SELECT count(*) FROM task_queue q
            WHERE NOT EXISTS (SELECT 1 FROM tasks t
                              WHERE t.id = q.task_id AND t.finalized_at IS NULL))
         + (SELECT count(*) FROM task_queue q JOIN tasks t ON t.id = q.task_id
            WHERE t.state <> 'leased' AND q.retrying <> (t.state = 'retry_wait'))
         + (SELECT count(*) FROM tasks t
            WHERE t.finalized_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM task_ends e
                              WHERE e.task_id = t.id AND e.finalized_at = t.finalized_at))
         )::int8 AS n",
    )
    .await
}

async fn assert_mirrored(db: &TestDb, after: &str) {
    assert_eq!(
        disagreements(db).await,
        0,
        "after {after}, task_queue or task_ends disagree with tasks"
    );
}

#[tokio::test]
async fn the_queue_and_the_end_log_follow_every_write_of_a_task() {
    let db = TestDb::new().await;
    let hooks = db.destination("hooks", Region::US).await;
    for n in 1..=6 {
        let mut task = new_task(&format!("r-{n}"), &hooks, Region::US);
        if n == 6 {
            task.ordering_key = Some(remit::domain::OrderingKey::new("patient-1").unwrap());
        }
        db.store.schedule(task).await.unwrap();
    }
    assert_mirrored(&db, "scheduling").await;
    assert_eq!(db.count("SELECT count(*) AS n FROM task_queue").await, 6);

    let claimed = db.claim(Region::US, "owner-1", 10).await;
    assert_eq!(claimed.len(), 6);
    assert_mirrored(&db, "a claim").await;
    let lease = |n: usize| claimed[n].lease();

    let ok = AttemptRecord {
        http_status: Some(200),
        ..AttemptRecord::default()
    };
    let busy = AttemptRecord {
        http_status: Some(503),
        ..AttemptRecord::default()
    };
    let finish = |n: usize, decision| Finish {
        lease: lease(n),
        destination: hooks.clone(),
        decision,
    };
    let outcomes = db
        .store
        .finish_many(&[
            finish(0, delivered(ok.clone())),
            finish(
                1,
                retry_at(db.clock(), t0() + Duration::hours(1), busy.clone()),
            ),
        ])
        .await
        .unwrap()
        .outcomes;
    assert_eq!(outcomes, [TransitionOutcome::Applied; 2]);
    assert_mirrored(&db, "a delivery and a retry").await;
    // A batch of finishes writes its end rows itself, and the row trigger
    // must leave them: the task ended once, so it has one end row.
    assert_eq!(
        db.count(&format!(
            "SELECT count(*) AS n FROM task_ends WHERE task_id = '{}'",
            lease(0).task_id
        ))
        .await,
        1,
        "the delivery's end is logged once"
    );

    let failed = db
        .store
        .fail(&lease(2), &FailureReason::Status(410), &busy)
        .await
        .unwrap();
    assert_eq!(failed, TransitionOutcome::Applied);
    assert_mirrored(&db, "a failure").await;

    let abandoned = db.store.abandon(&lease(3), &busy).await.unwrap();
    assert_eq!(abandoned, TransitionOutcome::Applied);
    assert_mirrored(&db, "an abandoned attempt").await;

    let extended = db
        .store
        .extend_lease(&lease(4), Duration::seconds(60))
        .await
        .unwrap();
    assert_eq!(extended, TransitionOutcome::Applied);
    let released = db
        .store
        .hand_back(&lease(4), Some(Duration::minutes(5)))
        .await
        .unwrap();
    assert_eq!(released, TransitionOutcome::Applied);
    assert_mirrored(&db, "an extension and a hand-back").await;

    // The failed task goes round again, and ends again: its first end row
    // no longer matches it.
    db.store
        .replay(claimed[2].task.id, Duration::days(1))
        .await
        .unwrap();
    assert_mirrored(&db, "a replay").await;
    let again = db.claim(Region::US, "owner-2", 10).await;
    let replayed = again
        .iter()
        .find(|c| c.task.id == claimed[2].task.id)
        .expect("the replayed task is claimed again");
    db.store
        .finish_many(&[Finish {
            lease: replayed.lease(),
            destination: hooks.clone(),
            decision: delivered(ok.clone()),
        }])
        .await
        .unwrap();
    assert_mirrored(&db, "the replayed task's delivery").await;

    // A lease left to expire (the ordered task's), handed back by
    // reconciliation.
    db.execute(
        "UPDATE tasks SET lease_expires_at = lease_expires_at - interval '1 hour' \
         WHERE state = 'leased'",
    )
    .await;
    db.store
        .reconcile(&ReconcileRequest {
            region: None,
            older_than: Duration::minutes(5),
            reclaim: true,
            ledger: None,
            list_limit: 10,
        })
        .await
        .unwrap();
    assert_mirrored(&db, "reconciliation's reclaim").await;

    // A hand edit moves a deadline.
    db.execute(
        "UPDATE tasks SET not_before = not_before + interval '1 day', \
           available_at = available_at + interval '1 day' WHERE state = 'retry_wait'",
    )
    .await;
    assert_mirrored(&db, "a hand edit").await;

    // A hand edit backdates the ends: each gets an end row of its new time,
    // and the rows of its old time no longer match it.
    db.execute(
        "UPDATE tasks SET finalized_at = finalized_at - interval '60 days', \
           delivered_at = delivered_at - interval '60 days' \
         WHERE finalized_at IS NOT NULL",
    )
    .await;
    assert_mirrored(&db, "backdating the ends").await;
    let prune = |older_than| PruneRequest {
        region: None,
        older_than,
        batch_size: 100,
    };
    let pruned = db.store.prune(&prune(Duration::days(30))).await.unwrap();
    assert_eq!(pruned.tasks, 2, "the delivered task and the replayed one");
    assert_mirrored(&db, "retention").await;
    assert_eq!(db.count("SELECT count(*) AS n FROM task_queue").await, 4);
    // The end rows that no longer matched go once they are older than the
    // age kept.
    assert_eq!(db.count("SELECT count(*) AS n FROM task_ends").await, 3);
    let later = db
        .store
        .clone()
        .with_clock(remit::store::Clock::pinned(t0() + Duration::days(40)));
    later.prune(&prune(Duration::days(30))).await.unwrap();
    assert_eq!(db.count("SELECT count(*) AS n FROM task_ends").await, 0);
    assert_mirrored(&db, "retention of the stale end rows").await;
}
