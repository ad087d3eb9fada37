//! PostgreSQL crashes and is back a second later while a rate-limited
//! backlog drains: the tasks the process holds (queued for tokens, or on
//! their way back) keep their leases and go out once the server accepts
//! connections again, instead of waiting for their leases to run out.

use remit::store::{Database, DatabaseConfig, Destinations, Schedule};
use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::Utc;
use remit::domain::{
    DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TenantId,
};

use crate::support::cluster::{Cluster, Tls};
use crate::support::{self, Receiver};

const DESTINATIONS: usize = 3;
const PER_DESTINATION: usize = 40;

#[actix_rt::test]
async fn held_tasks_go_out_soon_after_the_database_is_back() {
    let Some(cluster) = Cluster::start(Tls::Off) else {
        return;
    };
    let url = cluster.url("127.0.0.1", "postgres", "");
    remit::store::migrate(&url).await.unwrap();
    let store = Database::connect(&DatabaseConfig::new(url.clone()), support::db::test_key())
        .await
        .unwrap();
    let receiver = Receiver::start();
    let mut config = support::config_for_url(&url, Region::EU, "eu-1");
    for d in 0..DESTINATIONS {
        let id = DestinationId::new(&format!("d{d}")).unwrap();
        let hook = receiver.url(&format!("/d{d}"));
        store
            .add_destination(NewDestination::new(id.clone(), Region::EU, &hook, None).unwrap())
            .await
            .unwrap();
        config.throttle.destinations.insert(
            id.to_string(),
            remit_actors::config::ThrottleLimits {
                rate_per_second: 20.0,
                burst: 5,
                max_in_flight: 4,
            },
        );
        for i in 0..PER_DESTINATION {
            store
                .schedule(NewTask {
                    traceparent: None,
                    tenant_id: TenantId::new("clinic-1").unwrap(),
                    reminder_id: ReminderId::new(&format!("d{d}-{i}")).unwrap(),
                    destination_id: id.clone(),
                    region: Region::EU,
                    not_before: Utc::now(),
                    retry_horizon: chrono::Duration::hours(1),
                    payload: Payload::json(format!(r#"{{"i":{i}}}"#)),
                    ordering_key: None,
                })
                .await
                .unwrap();
        }
    }
    let total = DESTINATIONS * PER_DESTINATION;
    let runtime = support::start(config, &store).await;

    // A few of each destination's first second have gone out: the rest
    // is held, waiting for tokens.
    wait_for(&receiver, 15, Duration::from_secs(10)).await;
    cluster.crash();
    actix_rt::time::sleep(Duration::from_secs(1)).await;
    cluster.resume();
    let back = Instant::now();
    let at_restart = distinct(&receiver);
    assert!(at_restart < total, "the drain ended before the crash");

    // Delivery resumes within two seconds of the server accepting
    // connections, and the held tasks are not left to their leases (10 s
    // in the tests): everything is delivered well before they would end.
    let first_after = loop {
        if distinct(&receiver) > at_restart {
            break back.elapsed();
        }
        assert!(
            back.elapsed() < Duration::from_secs(5),
            "nothing delivered within 5 s of the database's return"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        first_after < Duration::from_secs(2),
        "delivery resumed {first_after:?} after the database was back"
    );
    wait_for(&receiver, total, Duration::from_secs(7)).await;
    eprintln!(
        "first delivery {first_after:?} and the last {:?} after the database was back",
        back.elapsed()
    );
    runtime.shutdown().await;
}

fn distinct(receiver: &Receiver) -> usize {
    receiver
        .requests()
        .iter()
        .filter(|r| r.status == 200)
        .filter_map(|r| r.header("idempotency-key").map(str::to_owned))
        .collect::<HashSet<_>>()
        .len()
}

async fn wait_for(receiver: &Receiver, n: usize, within: Duration) {
    let started = Instant::now();
    while distinct(receiver) < n {
        assert!(
            started.elapsed() < within,
            "{} of {n} delivered after {within:?}",
            distinct(receiver)
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}
