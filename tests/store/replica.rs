//! The reports read from a replica (`database.read_url`): a store reading
//! from a streaming standby sees what the primary committed once the
//! standby has replayed it, and says how far behind it is, so a report
//! read there can say how old its counts are.

use remit::store::{Database, DatabaseConfig, Destinations, Pooler, Reports, Schedule};
use std::time::{Duration, Instant};

use remit::domain::{NewDestination, Region};

use crate::cluster::{Cluster, Tls};
use crate::support::{new_task, test_key};

/// The region's pending count as `store` reads it.
async fn pending(store: &Database) -> i64 {
    store
        .status(Some(Region::EU))
        .await
        .unwrap()
        .regions
        .first()
        .map_or(0, |r| r.pending)
}

async fn wait_for_pending(replica: &Database, n: i64) {
    let started = Instant::now();
    while pending(replica).await != n {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the replica never showed {n} pending"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A primary of the test's own, migrated, with a streaming standby and a
/// store on the primary; `None` where no PostgreSQL binaries are installed.
async fn primary_standby_and_store() -> Option<(Cluster, Cluster, Database)> {
    let primary = Cluster::start(Tls::Off)?;
    let standby = primary.standby("replica1");
    let url = primary.url("127.0.0.1", "postgres", "");
    remit::store::migrate(&url).await.unwrap();
    let store = Database::connect(&DatabaseConfig::new(url), test_key())
        .await
        .unwrap();
    Some((primary, standby, store))
}

#[tokio::test]
async fn reports_read_from_a_replica_say_how_far_behind_it_is() {
    let Some((_primary, standby, store)) = primary_standby_and_store().await else {
        return;
    };
    let replica = store
        .reading_from(&standby.url("127.0.0.1", "postgres", ""), 2, Pooler::None)
        .await
        .unwrap();
    let crm = remit::domain::DestinationId::new("crm").unwrap();
    store
        .add_destination(
            NewDestination::new(crm.clone(), Region::EU, "http://127.0.0.1:9/", None).unwrap(),
        )
        .await
        .unwrap();
    for n in 0..5 {
        let task = new_task(&format!("first-{n}"), &crm, Region::EU);
        store.schedule(task).await.unwrap();
    }
    wait_for_pending(&replica, 5).await;
    let source = replica.read_source().await.unwrap().unwrap();
    assert!(source.standby && !source.paused, "{source:?}");
    assert_eq!(source.lag(), Some(chrono::Duration::zero()), "{source:?}");

    // Its replay paused, the replica falls behind what the primary commits.
    standby.query("SELECT pg_wal_replay_pause()");
    // A pause is asked for, then taken at the next record replayed.
    let asked = Instant::now();
    while standby.query("SELECT pg_get_wal_replay_pause_state()") != "paused" {
        assert!(asked.elapsed() < Duration::from_secs(10), "never paused");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let paused_at = Instant::now();
    for n in 0..3 {
        let task = new_task(&format!("later-{n}"), &crm, Region::EU);
        store.schedule(task).await.unwrap();
    }
    assert_eq!(pending(&store).await, 8, "the primary has them");
    assert_eq!(pending(&replica).await, 5, "the replica does not yet");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let source = replica.read_source().await.unwrap().unwrap();
    assert!(source.paused, "{source:?}");
    let lag = source.lag().unwrap();
    assert!(
        lag >= chrono::Duration::milliseconds(200)
            && lag.to_std().unwrap() <= paused_at.elapsed() + Duration::from_secs(1),
        "{lag} behind, paused {:?} ago",
        paused_at.elapsed()
    );
    assert!(
        source.summary().contains("behind the primary"),
        "{source:?}"
    );

    standby.query("SELECT pg_wal_replay_resume()");
    wait_for_pending(&replica, 8).await;
    let source = replica.read_source().await.unwrap().unwrap();
    assert_eq!(source.lag(), Some(chrono::Duration::zero()), "{source:?}");

    // The primary itself is no replica.
    let primary_source = store.read_source().await.unwrap().unwrap();
    assert!(!primary_source.standby);
    assert_eq!(primary_source.lag(), None);
}

/// A process started just after `remit migrate` may reach a replica that
/// has not yet replayed the migration: it waits for the replay rather than
/// refusing the replica as older than itself.
#[tokio::test]
async fn a_replica_still_replaying_a_migration_is_waited_for() {
    let Some((primary, standby, store)) = primary_standby_and_store().await else {
        return;
    };
    let newest = primary.query("SELECT max(version) FROM __diesel_schema_migrations");
    let recorded =
        format!("SELECT count(*) FROM __diesel_schema_migrations WHERE version = '{newest}'");
    // The newest migration's record taken away and replayed, then the
    // replay paused and the record written back: to the replica, that
    // migration is still to come.
    primary.query(&format!(
        "DELETE FROM __diesel_schema_migrations WHERE version = '{newest}'"
    ));
    let started = Instant::now();
    while standby.query(&recorded) != "0" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never replayed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    standby.query("SELECT pg_wal_replay_pause()");
    while standby.query("SELECT pg_get_wal_replay_pause_state()") != "paused" {
        assert!(started.elapsed() < Duration::from_secs(10), "never paused");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    primary.query(&format!(
        "INSERT INTO __diesel_schema_migrations (version) VALUES ('{newest}')"
    ));

    let read_url = standby.url("127.0.0.1", "postgres", "");
    let opening = tokio::spawn(async move {
        store
            .reading_from(&read_url, 1, Pooler::None)
            .await
            .map(|_| ())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !opening.is_finished(),
        "opened on a replica older than the build"
    );
    standby.query("SELECT pg_wal_replay_resume()");
    opening
        .await
        .unwrap()
        .expect("opened once the replica replayed the migration");
    assert_eq!(standby.query(&recorded), "1");
}
