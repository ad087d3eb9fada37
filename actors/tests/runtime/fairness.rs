//! A throttled destination with a deep backlog does not hold up the others.

use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn small_destinations_finish_before_a_throttled_one_drains_a_quarter() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let a = support::destination(&db, "a", Region::US, &receiver.url("/a"), None).await;
    let b = support::destination(&db, "b", Region::US, &receiver.url("/b"), None).await;
    let c = support::destination(&db, "c", Region::US, &receiver.url("/c"), None).await;
    let mut small = Vec::new();
    for i in 0..200 {
        support::task(&db, &format!("a{i}"), &a, Region::US).await;
    }
    for i in 0..20 {
        small.push(support::task(&db, &format!("b{i}"), &b, Region::US).await);
        small.push(support::task(&db, &format!("c{i}"), &c, Region::US).await);
    }
    let mut config = support::config(&db, Region::US, "us-1");
    config.throttle.destinations.insert(
        "a".into(),
        remit_actors::config::ThrottleLimits {
            rate_per_second: 5.0,
            burst: 5,
            max_in_flight: 4,
        },
    );
    let runtime = support::start(config, &db.store).await;
    support::wait_for_state(&db, &small, TaskState::Delivered, Duration::from_secs(10)).await;
    let sent_to_a = receiver.requests_to("/a").len();
    runtime.shutdown().await;

    assert_eq!(receiver.requests_to("/b").len(), 20);
    assert_eq!(receiver.requests_to("/c").len(), 20);
    assert!(
        sent_to_a < 50,
        "a drained {sent_to_a} of 200 while b and c finished"
    );

    // And a's pace held: no second of a's requests exceeds its rate plus burst.
    let times: Vec<_> = receiver.requests_to("/a").iter().map(|r| r.at).collect();
    for (i, t) in times.iter().enumerate() {
        let within_a_second = times[i..]
            .iter()
            .take_while(|u| **u < *t + chrono::Duration::seconds(1))
            .count();
        assert!(
            within_a_second <= 10,
            "{within_a_second} requests to a within one second"
        );
    }
}
