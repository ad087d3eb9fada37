//! With `database.read_url`, the console's overview reads a replica and
//! says how far behind it is, as does every other page read there.

use remit::store::{Database, DatabaseConfig, Destinations};
use std::time::{Duration, Instant};

use remit::domain::{DestinationId, NewDestination, Region};
use remit_actors::app::ConsoleServer;

use super::browser::Browser;
use crate::support::cluster::{Cluster, Tls};
use crate::support::{self, API_TOKEN};

#[actix_rt::test]
async fn the_overview_says_it_reads_a_replica_and_how_far_behind() {
    let Some(primary) = Cluster::start(Tls::Off) else {
        return;
    };
    let standby = primary.standby("replica1");
    let url = primary.url("127.0.0.1", "postgres", "");
    remit::store::migrate(&url).await.unwrap();
    let store = Database::connect(&DatabaseConfig::new(url.clone()), support::db::test_key())
        .await
        .unwrap();
    store
        .add_destination(
            NewDestination::new(
                DestinationId::new("crm").unwrap(),
                Region::EU,
                "http://127.0.0.1:9/hook",
                None,
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let mut config = support::config_for_url(&url, Region::EU, "console-1");
    config.database.read_url = Some(standby.url("127.0.0.1", "postgres", ""));
    remit_actors::app::install_crypto_provider();
    let console =
        ConsoleServer::start(&config, Region::EU, store, "127.0.0.1:0", support::logger())
            .await
            .unwrap();
    let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
    let started = Instant::now();
    loop {
        let page = browser.get("/console/overview").await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("data-read-source"), "{}", page.body);
        if page.body.contains("Read from a replica, caught up") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the replica never caught up: {}",
            page.body
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    // The other pages read there say where they read, too.
    for path in [
        "/console/destinations",
        "/console/destinations/crm",
        "/console/tasks",
        "/console/audit",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        assert!(
            page.body.contains("data-read-source") && page.body.contains("Read from a replica"),
            "{path}: {}",
            page.body
        );
    }

    standby.query("SELECT pg_wal_replay_pause()");
    while standby.query("SELECT pg_get_wal_replay_pause_state()") != "paused" {
        assert!(started.elapsed() < Duration::from_secs(20), "never paused");
        actix_rt::time::sleep(Duration::from_millis(10)).await;
    }
    // Something for the primary to commit that the replica has not.
    primary.query("CREATE TABLE written_after_the_pause (x int)");
    let page = browser.get("/console/overview").await;
    assert!(
        page.body.contains("behind the primary, its replay paused"),
        "{}",
        page.body
    );
    standby.query("SELECT pg_wal_replay_resume()");
    console.stop().await;
}
