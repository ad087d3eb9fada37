//! A task whose attempts were all lost with crashing consumers is failed
//! with `max_attempts` instead of being sent (and crashing) forever.

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn attempts_used_up_by_dead_consumers_fail_the_task_unsent() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::US, &receiver.url("/hook"), None).await;
    let id = support::task(&db, "poison", &dest, Region::US).await;
    let mut config = support::config(&db, Region::US, "us-1");
    config.retry.max_attempts = 3;
    // As if three consumers had claimed it and died with it.
    db.execute(&format!(
        "UPDATE tasks SET attempt_count = 3, state = 'retry_wait' WHERE id = '{}'",
        id.0
    ))
    .await;
    let runtime = support::start(config, &db.store).await;
    support::wait_for_state(&db, &[id], TaskState::Failed, Duration::from_secs(10)).await;
    runtime.shutdown().await;

    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(task.failure_reason.as_deref(), Some("max_attempts"));
    assert!(receiver.requests().is_empty(), "not sent again");
}
