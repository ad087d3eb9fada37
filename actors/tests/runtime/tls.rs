//! A webhook delivered end to end by a runtime whose every database
//! connection (the pools, the LISTEN connection) is TLS checked with
//! `verify-full` against a test CA, on a cluster that accepts nothing else.

use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::support::cluster::{Cluster, Tls};
use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn a_runtime_delivers_over_verified_tls() {
    let Some(cluster) = Cluster::start(Tls::On) else {
        return;
    };
    let db = TestDb::in_cluster(&cluster.verified_url()).await;
    let receiver = Receiver::start();
    let crm = support::destination(&db, "crm", Region::US, &receiver.url("/hook"), None).await;
    let first = support::task(&db, "tls-1", &crm, Region::US).await;
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &db.store).await;
    support::wait_for_state(&db, &[first], TaskState::Delivered, Duration::from_secs(10)).await;
    // Scheduled while the runtime listens: the wake-up comes over TLS too.
    let second = support::task(&db, "tls-2", &crm, Region::US).await;
    support::wait_for_state(
        &db,
        &[second],
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    runtime.shutdown().await;
    assert_eq!(receiver.requests_to("/hook").len(), 2);
}
