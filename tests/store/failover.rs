//! A primary with a synchronous streaming standby is lost (`pg_ctl stop
//! -m immediate`) and the standby promoted: a store whose URL names both
//! hosts with `target_session_attrs=read-write` goes on against the new
//! primary, and everything it was told was committed is there. The
//! replication report says, before, that a commit waits for the standby,
//! and, after, that the new primary has none.

use remit::store::{Database, DatabaseConfig, Destinations, Reports, Schedule};
use std::time::{Duration, Instant};

use remit::domain::{NewDestination, Region};

use crate::cluster::{Cluster, Tls};
use crate::support::{new_task, test_key};

#[tokio::test]
async fn a_store_follows_its_standby_when_promoted_and_keeps_every_commit() {
    let Some(primary) = Cluster::start(Tls::Off) else {
        return;
    };
    let standby = primary.standby("standby1");
    primary.make_synchronous("standby1");
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port, standby.port
    );
    remit::store::migrate(&url).await.unwrap();
    let store = Database::connect(&DatabaseConfig::new(url.clone()), test_key())
        .await
        .unwrap();
    let replication = store.replication().await.unwrap().unwrap();
    let synchronous: Vec<&str> = replication
        .synchronous()
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(synchronous, ["standby1"], "{replication:?}");

    let crm = remit::domain::DestinationId::new("crm").unwrap();
    store
        .add_destination(
            NewDestination::new(crm.clone(), Region::EU, "http://127.0.0.1:9/", None).unwrap(),
        )
        .await
        .unwrap();
    let mut committed = Vec::new();
    for n in 0..20 {
        let task = new_task(&format!("before-{n}"), &crm, Region::EU);
        committed.push(store.schedule(task).await.unwrap().task.id);
    }

    primary.crash();
    standby.promote();
    // The pool's connections to the lost server fail; new ones reach the
    // promoted standby, the first host refusing at once.
    let promoted = Instant::now();
    let after = loop {
        let task = new_task("after", &crm, Region::EU);
        match store.schedule(task).await {
            Ok(scheduled) => break scheduled.task.id,
            Err(e) => assert!(
                promoted.elapsed() < Duration::from_secs(15),
                "no write reached the promoted standby: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    committed.push(after);
    for id in &committed {
        assert!(
            store.task(*id).await.unwrap().is_some(),
            "a committed task is gone: {id:?}"
        );
    }
    let replication = store.replication().await.unwrap().unwrap();
    assert!(
        !replication.in_recovery,
        "the promoted standby is a primary"
    );
    assert!(replication.standbys.is_empty(), "{replication:?}");
    eprintln!(
        "writes reached the promoted standby {:?} after its promotion",
        promoted.elapsed()
    );
}
