//! Disabled means unsent: once a disable commits, the tasks this process
//! has claimed and queued for the destination go back to the database
//! unsent (not an attempt) instead of going out over the next seconds;
//! only the request already under way finishes. On both stores: over
//! NOTIFY on PostgreSQL, over the in-process wake-up on SQLite.

use remit::store::{Destinations, Schedule};
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};

use crate::support::{self, Backend, Receiver, Reply, TestDb};

#[actix_rt::test]
async fn a_disable_hands_claimed_tasks_back_unsent_on_postgres() {
    a_disable_hands_claimed_tasks_back_unsent(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_disable_hands_claimed_tasks_back_unsent_on_sqlite() {
    a_disable_hands_claimed_tasks_back_unsent(Backend::Sqlite).await;
}

async fn a_disable_hands_claimed_tasks_back_unsent(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/hook", Vec::new(), Reply::ok());
    let d = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        tasks.push(support::task(&db, &format!("r{i}"), &d, Region::EU).await);
    }
    // Five a second: what is claimed waits in the throttle's queue for its
    // token, seconds' worth of it.
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.throttle.default.rate_per_second = 5.0;
    config.throttle.default.burst = 1;
    let runtime = support::start(config, &db.store).await;
    receiver
        .wait_until(Duration::from_secs(10), "a first request", |r| {
            !r.is_empty()
        })
        .await;
    db.store.disable_destination(&d, None).await.unwrap();
    let sent_by_then = receiver.requests().len();

    // Every task not delivered is back in the database, unleased and not
    // counted as an attempt, long before the queue would have drained.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut held = 0;
        for id in &tasks {
            let task = db.store.task(*id).await.unwrap().unwrap();
            if task.state == TaskState::Leased {
                held += 1;
            }
        }
        if held == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{held} tasks still held");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
    let mut waiting = 0;
    for id in &tasks {
        let task = db.store.task(*id).await.unwrap().unwrap();
        if task.state == TaskState::Pending {
            assert_eq!(task.attempt_count, 0, "a hand-back is no attempt");
            waiting += 1;
        } else {
            assert_eq!(task.state, TaskState::Delivered);
        }
    }
    // A request under way when the disable committed may finish; another
    // could only have started before this test read the count.
    let sent = receiver.requests().len();
    assert!(
        sent <= sent_by_then + 1,
        "{} requests after the disable committed",
        sent - sent_by_then
    );
    assert_eq!(waiting, tasks.len() - sent, "the rest wait, unsent");
    runtime.shutdown().await;
    assert!(receiver.requests().len() <= sent_by_then + 1);
}
