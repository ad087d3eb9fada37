//! Two runtimes of one region against one database share the work.

use std::collections::HashMap;
use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn two_runtimes_deliver_everything_once_and_respect_the_rate_together() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let other = support::destination(&db, "other", Region::EU, &receiver.url("/other"), None).await;
    let mut tasks = Vec::new();
    for i in 0..60 {
        tasks.push(support::task(&db, &format!("r{i}"), &dest, Region::EU).await);
        tasks.push(support::task(&db, &format!("o{i}"), &other, Region::EU).await);
    }
    let limits = remit_actors::config::ThrottleLimits {
        rate_per_second: 20.0,
        burst: 5,
        max_in_flight: 4,
    };
    let mut runtimes = Vec::new();
    for consumer in ["eu-1", "eu-2"] {
        let mut config = support::config(&db, Region::EU, consumer);
        config.throttle.destinations.insert("crm".into(), limits);
        let store = db.another_store(support::db::test_key()).await;
        runtimes.push(support::start(config, &store).await);
    }
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(20)).await;
    for runtime in runtimes {
        runtime.shutdown().await;
    }

    let requests = receiver.requests();
    let mut per_key: HashMap<&str, usize> = HashMap::new();
    for r in &requests {
        *per_key
            .entry(r.header("idempotency-key").unwrap())
            .or_default() += 1;
    }
    assert_eq!(per_key.len(), 120, "every task reached the receiver");
    assert!(per_key.values().all(|&n| n == 1), "none twice");

    let owners = db
        .count("SELECT count(DISTINCT consumer_id) AS n FROM attempts WHERE outcome = 'delivered'")
        .await;
    assert_eq!(owners, 2, "both runtimes took part");

    // Both runtimes take their tokens from the destination's one bucket, so
    // in any second `crm` gets at most the rate plus the burst: 25, with one
    // request of slack for timestamps taken on the receiver's side. The 60
    // requests to `crm` are more than twice that, so a bucket per process
    // would break the bound.
    let times: Vec<_> = receiver.requests_to("/hook").iter().map(|r| r.at).collect();
    assert_eq!(times.len(), 60);
    for (i, t) in times.iter().enumerate() {
        let in_a_second = times[i..]
            .iter()
            .take_while(|u| **u < *t + chrono::Duration::seconds(1))
            .count();
        assert!(
            in_a_second <= 20 + 5 + 1,
            "{in_a_second} requests to crm in one second"
        );
    }
}
