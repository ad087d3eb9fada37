//! `remit status` with `database.read_url`: its counts come from the
//! replica, and it says how far behind the replica is.

use remit::store::{Database, DatabaseConfig, Destinations, Schedule};
use std::time::{Duration, Instant};

use remit::domain::{DestinationId, NewDestination, Region};

use crate::support::cluster::{Cluster, Tls};

/// Where a `remit` child connects.
struct At {
    url: String,
}

#[actix_rt::test]
async fn status_counts_from_the_replica_and_says_how_far_behind_it_is() {
    let Some(primary) = Cluster::start(Tls::Off) else {
        return;
    };
    let standby = primary.standby("replica1");
    let url = primary.url("127.0.0.1", "postgres", "");
    remit::store::migrate(&url).await.unwrap();
    let store = Database::connect(
        &DatabaseConfig::new(url.clone()),
        crate::support::db::test_key(),
    )
    .await
    .unwrap();
    let crm = DestinationId::new("crm").unwrap();
    store
        .add_destination(
            NewDestination::new(crm.clone(), Region::US, "http://127.0.0.1:9/", None).unwrap(),
        )
        .await
        .unwrap();
    let schedule = |n: u32| crate::support::db::new_task(&format!("r{n}"), &crm, Region::US);
    for n in 0..3 {
        store.schedule(schedule(n)).await.unwrap();
    }
    let count = "SELECT count(*) FROM tasks";
    let started = Instant::now();
    while standby.query(count) != "3" {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "never replicated"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
    standby.query("SELECT pg_wal_replay_pause()");
    while standby.query("SELECT pg_get_wal_replay_pause_state()") != "paused" {
        assert!(started.elapsed() < Duration::from_secs(15), "never paused");
        actix_rt::time::sleep(Duration::from_millis(10)).await;
    }
    for n in 3..5 {
        store.schedule(schedule(n)).await.unwrap();
    }

    let replica = At { url: url.clone() };
    let read_url = standby.url("127.0.0.1", "postgres", "");
    let json = crate::run(
        remit_testkit::remit_command!(replica)
            .env("REMIT_DATABASE__READ_URL", &read_url)
            .args(["status", "--format", "json"]),
    );
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["regions"][0]["pending"], 3,
        "the replica's count: {report}"
    );
    let from = &report["read_from"];
    assert_eq!(
        (from["replica"].as_bool(), from["paused"].as_bool()),
        (Some(true), Some(true)),
        "{from}"
    );
    assert!(from["lag_seconds"].as_f64().unwrap() > 0.0, "{from}");
    let text = crate::run(
        remit_testkit::remit_command!(replica)
            .env("REMIT_DATABASE__READ_URL", &read_url)
            .arg("status"),
    );
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Counts read from a replica"), "{text}");
    assert!(
        text.contains("behind the primary, its replay paused"),
        "{text}"
    );
    standby.query("SELECT pg_wal_replay_resume()");
}
