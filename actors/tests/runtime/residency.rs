//! A region's runtime never sends another region's tasks.

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::support::{self, Backend, Receiver, TestDb};

#[actix_rt::test]
async fn a_us_runtime_never_sends_an_eu_task() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let us = support::destination(&db, "us-crm", Region::US, &receiver.url("/us"), None).await;
    let eu = support::destination(&db, "eu-crm", Region::EU, &receiver.url("/eu"), None).await;
    let mut us_tasks = Vec::new();
    let mut eu_tasks = Vec::new();
    for i in 0..10 {
        us_tasks.push(support::task(&db, &format!("us{i}"), &us, Region::US).await);
        eu_tasks.push(support::task(&db, &format!("eu{i}"), &eu, Region::EU).await);
    }
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &db.store).await;
    support::wait_for_state(
        &db,
        &us_tasks,
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    // More claims after the first round: the eu rows were due throughout.
    let late = support::task(&db, "us-late", &us, Region::US).await;
    support::wait_for_state(&db, &[late], TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;

    assert!(receiver.requests_to("/eu").is_empty());
    for id in eu_tasks {
        let task = db.store.task(id).await.unwrap().unwrap();
        assert_eq!(task.state, TaskState::Pending);
        assert_eq!(task.attempt_count, 0);
    }
}

/// Regions come from configuration: a region the first schema never named
/// works end to end, and stays as strictly apart as the others.
#[actix_rt::test]
async fn a_region_named_in_configuration_works_end_to_end() {
    a_named_region_delivers_and_others_wait(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_region_named_in_configuration_works_end_to_end_on_sqlite() {
    a_named_region_delivers_and_others_wait(Backend::Sqlite).await;
}

async fn a_named_region_delivers_and_others_wait(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let ap: Region = "ap-southeast".parse().unwrap();
    let clinic = support::destination(&db, "ap-crm", ap, &receiver.url("/ap"), None).await;
    let eu = support::destination(&db, "eu-crm", Region::EU, &receiver.url("/eu"), None).await;
    let mut ap_tasks = Vec::new();
    for i in 0..5 {
        ap_tasks.push(support::task(&db, &format!("ap{i}"), &clinic, ap).await);
    }
    let eu_task = support::task(&db, "eu0", &eu, Region::EU).await;
    let runtime = support::start(support::config(&db, ap, "ap-1"), &db.store).await;
    support::wait_for_state(
        &db,
        &ap_tasks,
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    runtime.shutdown().await;

    assert_eq!(receiver.requests_to("/ap").len(), 5);
    assert!(receiver.requests_to("/eu").is_empty());
    let untouched = db.store.task(eu_task).await.unwrap().unwrap();
    assert_eq!(untouched.state, TaskState::Pending);
    let stored = db.store.task(ap_tasks[0]).await.unwrap().unwrap();
    assert_eq!(stored.region.as_str(), "ap-southeast");
}
