//! `Reports`: what `remit status` and the gauges read: the status report
//! and the gauges' queue. The tasks the report cases share are made here
//! too (`report_search` and `report_counts` read them).

use chrono::{DateTime, Utc};
use remit::domain::{ClaimedTask, TenantId};
use remit::store::console::TaskPage;
use remit::store::{Destinations, Leases, Reports, Schedule};

use super::*;
/// Schedules a task for `tenant` due at t0 + `offset_s` seconds.
pub(super) async fn tenant_task<H: Harness>(
    h: &H,
    tenant: &str,
    reminder: &str,
    destination: &DestinationId,
    region: Region,
    offset_s: i64,
) -> TaskId {
    let mut new = crate::support::new_task(reminder, destination, region);
    new.tenant_id = TenantId::new(tenant).unwrap();
    new.not_before = t0() + Duration::seconds(offset_s);
    h.store().schedule(new).await.unwrap().task.id
}

/// Claims everything due in `region` and fails the tasks in `fail`,
/// delivering the rest of what was claimed.
pub(super) async fn end<H: Harness>(h: &H, region: Region, fail: &[TaskId]) {
    let s = h.store();
    let claimed = s
        .claim_due(&claim(region, "console-test", 100))
        .await
        .unwrap();
    for c in claimed {
        if fail.contains(&c.task.id) {
            fail_gone(h, &c).await;
        } else {
            deliver_one(h, &c).await;
        }
    }
}

/// Ends `c`'s attempt delivered.
pub(super) async fn deliver_one<H: Harness>(h: &H, c: &ClaimedTask) {
    h.store()
        .finish(
            &c.lease(),
            &c.task.destination_id,
            &delivered(AttemptRecord::default()),
        )
        .await
        .unwrap();
}

/// Ends `c`'s attempt failed: the receiver answered 410.
pub(super) async fn fail_gone<H: Harness>(h: &H, c: &ClaimedTask) {
    h.store()
        .fail(
            &c.lease(),
            &FailureReason::Status(410),
            &AttemptRecord::default(),
        )
        .await
        .unwrap();
}

/// Ends `c`'s attempt with a 429, due again at `at`.
pub(super) async fn limited_until<H: Harness>(h: &H, c: &ClaimedTask, at: DateTime<Utc>) {
    let limited = AttemptRecord {
        http_status: Some(429),
        ..AttemptRecord::default()
    };
    h.store()
        .finish(
            &c.lease(),
            &c.task.destination_id,
            &retry_at(h.clock(), at, limited),
        )
        .await
        .unwrap();
}

pub(super) fn ids(page: &TaskPage) -> Vec<TaskId> {
    page.tasks.iter().map(|t| t.id).collect()
}

pub async fn status_reads_the_queue<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let slow = destination(h, "slow", Region::EU).await;
    let us = destination(h, "us-crm", Region::US).await;
    for n in 0..6 {
        task(
            h,
            &format!("r{n}"),
            if n % 2 == 0 { &crm } else { &slow },
            Region::EU,
        )
        .await;
    }
    task(h, "u1", &us, Region::US).await;
    h.clock().advance(Duration::seconds(10));
    let claimed = s.claim_due(&claim(Region::EU, "c", 4)).await.unwrap();
    assert_eq!(claimed.len(), 4);
    deliver_one(h, &claimed[0]).await;
    fail_gone(h, &claimed[1]).await;
    limited_until(h, &claimed[2], t0() + Duration::minutes(5)).await;
    s.pause_destination(&slow, Duration::minutes(2))
        .await
        .unwrap();
    // The fourth lease runs out.
    h.clock().advance(Duration::seconds(40));

    let report = s.status(Some(Region::EU)).await.unwrap();
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
    let counts = s.region_counts(Region::EU).await.unwrap();
    assert_eq!((counts.now, &counts.counts), (report.now, eu));

    let all = s.status(None).await.unwrap();
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
    let held = s.queue(Region::EU).await.unwrap();
    assert_eq!((held.pending, held.retry_wait, held.leased), (2, 1, 1));
    assert_eq!(
        held.oldest_eligible, None,
        "paused destinations hold their tasks"
    );
    assert_eq!(held.expired_leases, 1);
    let queue = s.queue(Region::US).await.unwrap();
    assert_eq!(
        (queue.pending, queue.delivered),
        (1, 0),
        "a gauge's read skips terminal rows"
    );
}

/// Claims every task due in `region` and fails each with the reason at its
/// place in `reasons`, in the order the claim answered them.
async fn fail_each<H: Harness>(h: &H, region: Region, reasons: &[FailureReason]) {
    let s = h.store();
    let claimed = s.claim_due(&claim(region, "c", 100)).await.unwrap();
    assert_eq!(claimed.len(), reasons.len(), "one reason per task due");
    for (c, reason) in claimed.iter().zip(reasons) {
        s.fail(&c.lease(), reason, &AttemptRecord::default())
            .await
            .unwrap();
    }
}

pub async fn status_lists_refusals_disabled_destinations_and_failures_most_first<H: Harness>(
    h: &H,
) {
    let s = h.store();
    let a = destination(h, "a", Region::EU).await;
    let b = destination(h, "b", Region::EU).await;
    let us = destination(h, "us-crm", Region::US).await;
    for n in 0..3 {
        task(h, &format!("a{n}"), &a, Region::EU).await;
    }
    task(h, "b0", &b, Region::EU).await;
    task(h, "u0", &us, Region::US).await;
    fail_each(
        h,
        Region::EU,
        &[
            FailureReason::Status(500),
            FailureReason::Status(410),
            FailureReason::MaxAttempts,
            FailureReason::Status(410),
        ],
    )
    .await;
    let later = task(h, "b1", &b, Region::EU).await;
    s.mark_refused(&a, "private address".into()).await.unwrap();
    s.disable_destination(&b, Some("by hand".into()))
        .await
        .unwrap();

    let report = s.status(Some(Region::EU)).await.unwrap();
    let mut reasons = report.failures_last_day.clone();
    reasons.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    assert_eq!(
        report.failures_last_day, reasons,
        "most first, then by name"
    );
    assert_eq!(report.failures_last_day[0], ("http_410".to_owned(), 2));
    assert_eq!(report.failures_last_day.len(), 3);
    assert_eq!(report.refused.len(), 1);
    assert_eq!(
        (
            &report.refused[0].destination,
            report.refused[0].region,
            report.refused[0].why.as_str(),
            report.refused[0].last
        ),
        (&a, Region::EU, "private address", t0())
    );
    assert_eq!(
        report.disabled,
        vec![s.destination(&b).await.unwrap().unwrap()],
        "the disabled destination as it reads"
    );
    assert_eq!(report.regions[0].oldest_eligible, None, "b is disabled");
    let eu = s.queue(Region::EU).await.unwrap();
    assert_eq!((eu.pending, eu.disabled_destinations), (1, 1));
    assert_eq!(s.queue(Region::US).await.unwrap().disabled_destinations, 0);
    assert!(s.status(Some(Region::US)).await.unwrap().refused.is_empty());

    // A refusal is listed for ten minutes after it was last recorded, the
    // failures for a day.
    h.clock().advance(Duration::minutes(10));
    let report = s.status(None).await.unwrap();
    assert!(report.refused.is_empty(), "an old refusal drops off");
    assert_eq!(report.failures_last_day.len(), 3);
    h.clock().advance(Duration::days(1));
    let report = s.status(None).await.unwrap();
    assert!(report.failures_last_day.is_empty());
    assert_eq!(report.regions[0].failed, 4, "ended tasks still count");
    assert_eq!(
        s.task(later).await.unwrap().unwrap().state,
        TaskState::Pending,
        "a disabled destination's task waits"
    );

    // A region with no task at all counts nothing, and is not listed.
    let none = s.region_counts(Region::new("ap").unwrap()).await.unwrap();
    assert_eq!(
        (
            none.counts.pending,
            none.counts.delivered,
            none.counts.oldest_eligible
        ),
        (0, 0, None)
    );
    assert_eq!(report.regions.len(), 2);
}
