//! A reminder due long ago gets its first attempt, whatever the runtime did
//! with it before: tasks whose retry horizon passed years ago, held in a
//! throttle's queue when the receiver's 429 pauses their destination, are
//! handed back (remit's side, not an attempt) and then sent, instead of
//! ending as `retry_horizon` with no attempt at all. On both stores.

use remit::store::Schedule;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use remit::domain::{Region, TaskState};

use crate::support::{self, Backend, Receiver, Reply, RetryAfter, TestDb};

#[actix_rt::test]
async fn tasks_due_years_ago_each_get_an_attempt_on_postgres() {
    tasks_due_years_ago_each_get_an_attempt(Backend::Postgres).await;
}

#[actix_rt::test]
async fn tasks_due_years_ago_each_get_an_attempt_on_sqlite() {
    tasks_due_years_ago_each_get_an_attempt(Backend::Sqlite).await;
}

async fn tasks_due_years_ago_each_get_an_attempt(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    // The first request pauses the destination for a second; every other
    // is accepted, slowly enough that the rest queue in the throttle.
    receiver.script(
        "/hook",
        vec![Reply::status(429).retry_after(RetryAfter::Seconds(1))],
        Reply::ok().delayed(Duration::from_millis(20)),
    );
    let d = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let due = Utc.with_ymd_and_hms(2020, 3, 1, 9, 0, 0).unwrap();
    let mut tasks = Vec::new();
    for i in 0..30 {
        tasks.push(support::task_at(&db, &format!("r{i}"), &d, Region::EU, due).await);
    }
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.send.max_in_flight = 1;
    let runtime = support::start(config, &db.store).await;

    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let mut open = 0;
        for id in &tasks {
            let task = db.store.task(*id).await.unwrap().unwrap();
            if task.finalized_at.is_none() {
                open += 1;
            }
        }
        if open == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{open} tasks still open"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
    runtime.shutdown().await;

    let mut delivered = 0;
    for id in &tasks {
        let task = db.store.task(*id).await.unwrap().unwrap();
        let attempts = db.store.attempts(*id).await.unwrap();
        assert!(
            !attempts.is_empty(),
            "{:?} ended {:?} ({:?}) without an attempt",
            task.reminder_id,
            task.state,
            task.failure_reason
        );
        if task.state == TaskState::Delivered {
            delivered += 1;
        }
    }
    // The 429's task is past its horizon: its first attempt was its last.
    assert_eq!(delivered, tasks.len() - 1, "every other task was delivered");
    assert_eq!(receiver.requests().len(), tasks.len());
}
