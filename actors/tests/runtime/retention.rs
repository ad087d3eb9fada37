//! The runtime prunes its own region's old terminal tasks, and nothing
//! else, and the audit log's entries past `retention.audit_keep_days`.

use remit::store::{Leases, Schedule};
use std::time::Duration;

use remit::domain::{AttemptRecord, Region, TaskId, TaskState};

use crate::support::{self, delivered, TestDb};

/// Claims and delivers the one due task of `region`.
async fn deliver(db: &TestDb, region: Region) -> TaskId {
    let mut claimed = db
        .store
        .claim_due(&support::db::claim(region, "elsewhere", 1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let c = claimed.remove(0);
    db.store
        .finish(
            &c.lease(),
            &c.task.destination_id,
            &delivered(AttemptRecord::default()),
        )
        .await
        .unwrap();
    c.task.id
}

#[actix_rt::test]
async fn the_runtime_prunes_its_regions_old_terminal_tasks_only() {
    let db = TestDb::with_database_clock().await;
    let us = support::destination(&db, "us-crm", Region::US, "http://127.0.0.1:9/", None).await;
    let eu = support::destination(&db, "eu-crm", Region::EU, "http://127.0.0.1:9/", None).await;
    support::task(&db, "old", &us, Region::US).await;
    let old = deliver(&db, Region::US).await;
    support::task(&db, "old-eu", &eu, Region::EU).await;
    let old_eu = deliver(&db, Region::EU).await;
    support::task(&db, "young", &us, Region::US).await;
    let young = deliver(&db, Region::US).await;
    // Ended 40 days ago, as far as the database's clock can tell.
    db.execute(
        "UPDATE tasks SET finalized_at = finalized_at - interval '40 days', \
                          delivered_at = delivered_at - interval '40 days' \
         WHERE reminder_id IN ('old', 'old-eu')",
    )
    .await;
    let later = chrono::Utc::now() + chrono::Duration::days(1);
    let live = support::task_at(&db, "live", &us, Region::US, later).await;
    // The log only grows (an UPDATE is refused): an old entry is written
    // old, one of this region and one of no region.
    db.execute(
        "INSERT INTO audit_log (at, actor_kind, action, target_kind, target_id, region) \
         VALUES (now() - interval '400 days', 'system', 'destination.disable', 'destination', \
                 'old', 'us'), \
                (now() - interval '400 days', 'system', 'rekey', 'payload_key', 'shared', NULL)",
    )
    .await;
    let old_entries = "SELECT count(*) AS n FROM audit_log WHERE target_id = 'old'";

    let runtime = support::start(support::config(&db, Region::US, "us-1"), &db.store).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while db.store.task(old).await.unwrap().is_some() || db.count(old_entries).await > 0 {
        assert!(std::time::Instant::now() < deadline, "not pruned in time");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
    let kept = "SELECT count(*) AS n FROM audit_log WHERE action = 'destination.create'";
    assert_eq!(db.count(kept).await, 2, "young entries stay");
    let shared = "SELECT count(*) AS n FROM audit_log WHERE target_id = 'shared'";
    assert_eq!(
        db.count(shared).await,
        1,
        "no region's entries are remit prune's"
    );
    runtime.shutdown().await;

    assert!(db.store.attempts(old).await.unwrap().is_empty());
    for (id, state, why) in [
        (old_eu, TaskState::Delivered, "another region's"),
        (young, TaskState::Delivered, "too young"),
        (live, TaskState::Pending, "live"),
    ] {
        let task = db.store.task(id).await.unwrap();
        assert_eq!(task.map(|t| t.state), Some(state), "{why}");
    }
}
