//! Receivers that misbehave on the wire: one deadline bounds the whole
//! exchange, the attempt is a `timeout`, the task is delivered later, the
//! other destinations keep flowing and no capacity is lost.

use remit::store::Schedule;
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};

use crate::support::hostile::{HostileReceiver, Misbehaviour};
use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn stalled_trickling_and_silent_receivers_time_out_and_lose_nothing() {
    let db = TestDb::with_database_clock().await;
    let plan = vec![
        Misbehaviour::StallBody,
        Misbehaviour::Trickle,
        Misbehaviour::Silent,
        Misbehaviour::StallBody,
    ];
    let hostile = HostileReceiver::start(plan.clone());
    let receiver = Receiver::start();
    let slow = support::destination(&db, "slow", Region::US, &hostile.url("/hook"), None).await;
    let good = support::destination(&db, "good", Region::US, &receiver.url("/hook"), None).await;

    let mut config = support::config(&db, Region::US, "us-1");
    config.lease.seconds = 3;
    config.send.timeout_ms = 500;
    config.retry.backoff_base_ms = 20;
    // Two requests in flight to the misbehaving receiver at most: had a
    // stalled exchange kept its slot, the rest would never go.
    config.throttle.destinations.insert(
        "slow".into(),
        remit_actors::config::ThrottleLimits {
            rate_per_second: 100.0,
            burst: 100,
            max_in_flight: 2,
        },
    );
    let runtime = support::start(config, &db.store).await;

    let mut slow_tasks = Vec::new();
    for i in 0..6 {
        slow_tasks.push(support::task(&db, &format!("slow-{i}"), &slow, Region::US).await);
    }
    let mut good_tasks = Vec::new();
    for i in 0..20 {
        good_tasks.push(support::task(&db, &format!("good-{i}"), &good, Region::US).await);
    }
    support::wait_for_state(
        &db,
        &good_tasks,
        TaskState::Delivered,
        Duration::from_secs(15),
    )
    .await;
    support::wait_for_state(
        &db,
        &slow_tasks,
        TaskState::Delivered,
        Duration::from_secs(20),
    )
    .await;

    let given_up = hostile.given_up();
    assert_eq!(
        given_up.len(),
        plan.len(),
        "every misbehaving exchange ended"
    );
    for g in &given_up {
        assert!(
            g.after >= Duration::from_millis(450) && g.after < Duration::from_millis(1_500),
            "{:?} was dropped after {:?}, not at the 500 ms send timeout",
            g.misbehaviour,
            g.after
        );
    }
    assert_eq!(hostile.delivered().len(), 6, "each slow task answered once");

    let mut timeouts = 0;
    for id in &slow_tasks {
        for attempt in db.store.attempts(*id).await.unwrap() {
            if attempt.observed.transport_error.as_deref() == Some("timeout") {
                timeouts += 1;
            }
        }
    }
    assert_eq!(
        timeouts,
        plan.len(),
        "each stalled exchange is a timeout attempt"
    );

    // Every place in memory comes back once the work is done.
    let deadline = Instant::now() + Duration::from_secs(5);
    while runtime.held() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} slots still held",
            runtime.held()
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
    runtime.shutdown().await;
}
