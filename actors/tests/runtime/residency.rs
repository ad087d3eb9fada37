//! A region's runtime never sends another region's tasks.

use std::time::Duration;

use remit::domain::{Region, TaskState};
use remit::store::Store;

use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn a_us_runtime_never_sends_an_eu_task() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let us = support::destination(&db, "us-crm", Region::Us, &receiver.url("/us"), None).await;
    let eu = support::destination(&db, "eu-crm", Region::Eu, &receiver.url("/eu"), None).await;
    let mut us_tasks = Vec::new();
    let mut eu_tasks = Vec::new();
    for i in 0..10 {
        us_tasks.push(support::task(&db, &format!("us{i}"), &us, Region::Us).await);
        eu_tasks.push(support::task(&db, &format!("eu{i}"), &eu, Region::Eu).await);
    }
    let runtime = support::start(support::config(&db, Region::Us, "us-1"), &db.store).await;
    support::wait_for_state(
        &db,
        &us_tasks,
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    // More claims after the first round: the eu rows were due throughout.
    let late = support::task(&db, "us-late", &us, Region::Us).await;
    support::wait_for_state(&db, &[late], TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;

    assert!(receiver.requests_to("/eu").is_empty());
    for id in eu_tasks {
        let task = db.store.task(id).await.unwrap().unwrap();
        assert_eq!(task.state, TaskState::Pending);
        assert_eq!(task.attempt_count, 0);
    }
}
