//! Cancels while `remit run` delivers: the receiver never gets a request
//! that started after a cancel was committed. A task the cancel ended at
//! once is never sent; a task in flight gets at most the request already
//! under way, and no retry after it.

use remit::store::{Cancel, Changes, Schedule};
use std::collections::HashMap;
use std::time::Duration;

use remit::domain::{Region, TaskId, TaskState};

use crate::support::{self, Receiver, Reply, TestDb};

/// Every task has ended: failed (its attempts spent) or cancelled.
async fn all_ended(db: &TestDb, within: Duration) {
    let deadline = std::time::Instant::now() + within;
    loop {
        let live = db
            .count("SELECT count(*) AS n FROM tasks WHERE finalized_at IS NULL")
            .await;
        if live == 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{live} tasks still live after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_rt::test]
async fn no_request_starts_after_a_committed_cancel() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    // Every answer is retryable, so only a cancel stops a task early; the
    // delay keeps requests in flight when cancels land.
    receiver.script(
        "/hook",
        vec![],
        Reply::status(503).delayed(Duration::from_millis(40)),
    );
    super::run(super::remit(&db).arg("migrate"));
    let crm = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let mut ids = Vec::new();
    for n in 0..60 {
        ids.push(support::task(&db, &format!("r{n}"), &crm, Region::EU).await);
    }
    // Whether a due task is still waiting when its cancel lands is the
    // claimer's timing; tasks due in an hour are waiting for certain, so the
    // cancel that ends a task at once is always exercised.
    let mut later = Vec::new();
    for n in 0..6 {
        let not_before = chrono::Utc::now() + chrono::Duration::hours(1);
        later.push(support::task_at(&db, &format!("later{n}"), &crm, Region::EU, not_before).await);
    }
    let keys: HashMap<String, TaskId> = {
        let mut keys = HashMap::new();
        for id in ids.iter().chain(&later) {
            let task = db.store.task(*id).await.unwrap().unwrap();
            keys.insert(task.idempotency_key, *id);
        }
        keys
    };

    let mut child = super::remit(&db)
        .args(["run", "--region", "eu"])
        .env("REMIT_THROTTLE__DEFAULT__RATE_PER_SECOND", "200")
        .env("REMIT_THROTTLE__DEFAULT__MAX_IN_FLIGHT", "8")
        .env("REMIT_RETRY__MAX_ATTEMPTS", "4")
        .env("REMIT_RETRY__BACKOFF_BASE_MS", "100")
        .env("REMIT_RETRY__BACKOFF_CAP_SECONDS", "1")
        .env("REMIT_METRICS__QUEUE_INTERVAL_SECONDS", "1")
        .spawn()
        .unwrap();

    // Every other task is cancelled, in waves, while the run sends.
    let mut answers = Vec::new();
    for (wave, chunk) in ids
        .iter()
        .step_by(2)
        .collect::<Vec<_>>()
        .chunks(6)
        .enumerate()
    {
        receiver
            .wait_until(Duration::from_secs(20), "sends under way", |r| {
                r.len() >= 4 * (wave + 1)
            })
            .await;
        for id in chunk {
            answers.push((**id, db.store.cancel(**id, "cli").await.unwrap()));
        }
    }
    for id in &later {
        answers.push((*id, db.store.cancel(*id, "cli").await.unwrap()));
    }
    all_ended(&db, Duration::from_secs(60)).await;
    super::kill(&child, "TERM");
    assert_eq!(child.wait().unwrap().code(), Some(0));

    let requests = receiver.requests_to("/hook");
    let mut at_once = 0;
    for (id, answer) in answers {
        let task = db.store.task(id).await.unwrap().unwrap();
        assert_eq!(task.state, TaskState::Cancelled, "{id}");
        let committed = task.cancelled.as_ref().expect("who cancelled").at;
        let late: Vec<_> = requests
            .iter()
            .filter(|r| r.header("idempotency-key").and_then(|k| keys.get(k)) == Some(&id))
            .filter(|r| r.at >= committed)
            .collect();
        match answer {
            Cancel::Cancelled(_) => {
                at_once += 1;
                assert!(late.is_empty(), "{id} was sent after its cancel: {late:?}");
            }
            Cancel::AfterAttempt(_) => {
                // Only the request already under way may arrive after.
                assert!(
                    late.len() <= 1,
                    "{id} was retried after its cancel: {late:?}"
                );
            }
            other => panic!("{id}: {other:?}"),
        }
    }
    assert!(
        at_once >= later.len(),
        "the later tasks' cancels ended them at once"
    );
    // The others were sent and answered 503 until their attempts ran out.
    let failed = db
        .count("SELECT count(*) AS n FROM tasks WHERE state = 'failed'")
        .await;
    assert_eq!(failed, 30);
}
