//! The process never has more requests under way than `send.max_in_flight`,
//! however many destinations it serves, although it claims further ahead.

use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::support::{self, Receiver, Reply, TestDb};

#[actix_rt::test]
async fn requests_under_way_never_exceed_the_process_cap() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let slow = Duration::from_millis(150);
    let mut tasks = Vec::new();
    for name in ["a", "b", "c"] {
        let path = format!("/{name}");
        receiver.script(&path, Vec::new(), Reply::ok().delayed(slow));
        let d = support::destination(&db, name, Region::US, &receiver.url(&path), None).await;
        for i in 0..6 {
            tasks.push(support::task(&db, &format!("{name}{i}"), &d, Region::US).await);
        }
    }
    let mut config = support::config(&db, Region::US, "us-1");
    config.send.max_in_flight = 3;
    let runtime = support::start(config, &db.store).await;
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(20)).await;
    runtime.shutdown().await;

    // Every request is answered no sooner than `slow` after it arrived and
    // a new one starts only when one has ended, so no window shorter than
    // `slow` may hold more than three arrivals.
    let mut times: Vec<_> = receiver.requests().iter().map(|r| r.at).collect();
    times.sort();
    assert_eq!(times.len(), 18);
    let window = chrono::Duration::from_std(slow).unwrap();
    for (i, t) in times.iter().enumerate() {
        let together = times[i..].iter().take_while(|u| **u < *t + window).count();
        assert!(together <= 3, "{together} requests under way at once");
    }
}
