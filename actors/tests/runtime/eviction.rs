//! A destination's throttle lives only while the destination has work
//! here: memory follows the destinations in flight, not the destinations
//! ever sent to. An evicted throttle takes nothing with it that a
//! destination's promises rest on.

use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};
use remit_actors::runtime::RuntimeStats;

use crate::support::{self, Receiver, Reply, RetryAfter, TestDb};

/// Waits until the runtime holds `count` throttles or fewer.
async fn wait_for_throttles(stats: &RuntimeStats, count: u64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let now = RuntimeStats::read(&stats.throttles);
        if now <= count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{now} throttles still in memory after {within:?}, expected at most {count}"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_rt::test]
async fn throttles_go_once_their_destinations_have_no_work_and_come_back_with_it() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let url = receiver.url("/hook");
    let mut destinations = Vec::new();
    let mut tasks = Vec::new();
    for i in 0..60 {
        let dest = support::destination(&db, &format!("d{i}"), Region::EU, &url, None).await;
        tasks.push(support::task(&db, &format!("r{i}"), &dest, Region::EU).await);
        destinations.push(dest);
    }
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let stats = runtime.stats();

    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(20)).await;
    wait_for_throttles(stats, 0, Duration::from_secs(20)).await;

    // The same destinations again: each gets a fresh throttle, which
    // delivers and goes in its turn.
    let mut again = Vec::new();
    for (i, dest) in destinations.iter().enumerate().take(10) {
        again.push(support::task(&db, &format!("again-{i}"), dest, Region::EU).await);
    }
    support::wait_for_state(&db, &again, TaskState::Delivered, Duration::from_secs(20)).await;
    wait_for_throttles(stats, 0, Duration::from_secs(20)).await;
    let restarts = RuntimeStats::read(&stats.restarts);
    runtime.shutdown().await;

    assert_eq!(receiver.requests_to("/hook").len(), 70, "each task once");
    assert_eq!(restarts, 0, "going idle is no failure");
}

#[actix_rt::test]
async fn a_pause_outlives_the_throttle_of_its_destination() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script(
        "/hook",
        vec![Reply::status(429).retry_after(RetryAfter::Seconds(6))],
        Reply::ok(),
    );
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let first = support::task(&db, "r0", &dest, Region::EU).await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let stats = runtime.stats();

    receiver
        .wait_until(Duration::from_secs(10), "the 429", |r| !r.is_empty())
        .await;
    support::wait_for_state(&db, &[first], TaskState::RetryWait, Duration::from_secs(10)).await;
    // The throttle that met the 429 is gone; only then does more work for
    // the destination arrive, to be met by a throttle that never saw it.
    wait_for_throttles(stats, 0, Duration::from_secs(10)).await;
    let mut tasks = vec![first];
    for i in 1..4 {
        tasks.push(support::task(&db, &format!("r{i}"), &dest, Region::EU).await);
    }
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(30)).await;
    runtime.shutdown().await;

    let requests = receiver.requests_to("/hook");
    let rejected = &requests[0];
    assert_eq!(rejected.status, 429);
    let raw = rejected.retry_after.clone().unwrap();
    let deadline = remit::policy::parse_retry_after(&raw, rejected.at, None).unwrap();
    for later in &requests[1..] {
        assert!(
            later.at >= deadline,
            "a request came at {} before the receiver's deadline {deadline} ({raw})",
            later.at
        );
    }
    assert_eq!(requests.len(), 5, "four tasks, one retry");
}
