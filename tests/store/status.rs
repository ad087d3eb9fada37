//! `status` on both stores: one screen from the database alone.

use chrono::Duration;
use remit::domain::{AttemptRecord, FailureReason, Region};
use remit::store::Reports;
use remit::store::Store;

use crate::support::{claim, delivered, retry_at, t0, Backend, TestDb};

#[tokio::test]
async fn status_reads_the_queue_on_postgres() {
    reads_the_queue(Backend::Postgres).await;
}

#[tokio::test]
async fn status_reads_the_queue_on_sqlite() {
    reads_the_queue(Backend::Sqlite).await;
}

async fn reads_the_queue(backend: Backend) {
    let db = TestDb::on(backend).await;
    let s = &db.store;
    let crm = db.destination("crm", Region::EU).await;
    let slow = db.destination("slow", Region::EU).await;
    let us = db.destination("us-crm", Region::US).await;
    for n in 0..6 {
        db.task(
            &format!("r{n}"),
            if n % 2 == 0 { &crm } else { &slow },
            Region::EU,
        )
        .await;
    }
    db.task("u1", &us, Region::US).await;
    db.clock().advance(Duration::seconds(10));
    let claimed = s.claim_due(&claim(Region::EU, "c", 4)).await.unwrap();
    assert_eq!(claimed.len(), 4);
    let limited = AttemptRecord {
        http_status: Some(429),
        ..AttemptRecord::default()
    };
    s.finish(
        &claimed[0].lease(),
        &claimed[0].task.destination_id,
        &delivered(AttemptRecord::default()),
    )
    .await
    .unwrap();
    s.fail(
        &claimed[1].lease(),
        &FailureReason::Status(410),
        &AttemptRecord::default(),
    )
    .await
    .unwrap();
    s.finish(
        &claimed[2].lease(),
        &claimed[2].task.destination_id,
        &retry_at(s.clock(), t0() + Duration::minutes(5), limited.clone()),
    )
    .await
    .unwrap();
    s.pause_destination(&slow, Duration::minutes(2))
        .await
        .unwrap();
    // The fourth lease runs out.
    db.clock().advance(Duration::seconds(40));

    let report = db.store.status(Some(Region::EU)).await.unwrap();
    assert_eq!(report.now, t0() + Duration::seconds(50));
    assert_eq!(report.regions.len(), 1, "only the region asked for");
    let eu = &report.regions[0];
    assert_eq!(
        (
            eu.pending,
            eu.leased,
            eu.retry_wait,
            eu.delivered,
            eu.failed
        ),
        (2, 1, 1, 1, 1)
    );
    assert_eq!(eu.expired_leases, 1);
    assert_eq!(
        eu.oldest_eligible,
        Some(Duration::seconds(50)),
        "due since t0"
    );
    assert_eq!(report.paused.len(), 1);
    assert_eq!(report.paused[0].0, slow);
    assert_eq!(report.top_retry_wait.len(), 1);
    assert_eq!(report.top_rate_limited[0].1, 1);
    assert_eq!(report.failures_last_day, vec![("http_410".to_owned(), 1)]);
    let latency = report.deadline_to_delivery.unwrap();
    assert_eq!((latency.count, latency.p50), (1, Duration::seconds(10)));
    // The counts alone (the console's overview) are the report's.
    let counts = db.store.region_counts(Region::EU).await.unwrap();
    assert_eq!((counts.now, &counts.counts), (report.now, eu));

    let all = db.store.status(None).await.unwrap();
    assert_eq!(all.regions.len(), 2, "every region");
    assert_eq!(
        all.regions
            .iter()
            .map(|r| r.region.map(|r| r.to_string()))
            .collect::<Vec<_>>(),
        vec![Some("eu".to_owned()), Some("us".to_owned())],
        "in name order"
    );
    assert_eq!(&all.regions[0], eu, "a region counts alike either way");
    assert_eq!(
        (all.regions[1].pending, all.regions[1].delivered),
        (1, 0),
        "the other region's own counts"
    );
    assert_eq!(all.top_retry_wait, report.top_retry_wait);
    // Work the claim would skip is not work waiting: with both destinations
    // of the region paused, nothing is eligible.
    s.pause_destination(&crm, Duration::minutes(2))
        .await
        .unwrap();
    let held = db.store.queue(Region::EU).await.unwrap();
    assert_eq!((held.pending, held.retry_wait, held.leased), (2, 1, 1));
    assert_eq!(
        held.oldest_eligible, None,
        "paused destinations hold their tasks"
    );
    assert_eq!(held.expired_leases, 1);
    let queue = db.store.queue(Region::US).await.unwrap();
    assert_eq!(
        (queue.pending, queue.delivered),
        (1, 0),
        "a gauge's read skips terminal rows"
    );
}
