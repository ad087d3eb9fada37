//! Retention: pruning terminal tasks by age, with their attempts and
//! payloads, in batches, never a live task, one region at a time when asked.
//! Rows are aged by moving the pinned clock, on which the store stamps
//! `finalized_at` and measures the age.

use remit::domain::{
    idempotency_key, ClaimedTask, PruneReport, PruneRequest, ReminderId, Task, TenantId,
};
use remit::store::{Leases, Schedule, Upkeep};

use super::*;

fn prune(region: Option<Region>, older_than: Duration, batch_size: u32) -> PruneRequest {
    PruneRequest {
        region,
        older_than,
        batch_size,
    }
}

/// Claims the one due task outside the `skip`ped destinations.
async fn claim_only<H: Harness>(h: &H, region: Region, skip: &[&DestinationId]) -> ClaimedTask {
    let mut request = claim(region, "c", 1);
    request.skip = skip.iter().map(|d| (*d).clone()).collect();
    let mut claimed = h.store().claim_due(&request).await.unwrap();
    assert_eq!(claimed.len(), 1, "one task due");
    claimed.remove(0)
}

/// A task scheduled, claimed and ended now: delivered, or failed.
async fn ended<H: Harness>(
    h: &H,
    reminder: &str,
    d: &DestinationId,
    region: Region,
    skip: &[&DestinationId],
    delivered: bool,
) -> Task {
    let id = task(h, reminder, d, region).await;
    let c = claim_only(h, region, skip).await;
    assert_eq!(c.task.id, id);
    let s = h.store();
    let outcome = if delivered {
        s.finish(
            &c.lease(),
            &c.task.destination_id,
            &super::delivered(record(200)),
        )
        .await
        .unwrap()
    } else {
        s.fail(&c.lease(), &FailureReason::Status(410), &record(410))
            .await
            .unwrap()
    };
    assert_eq!(outcome, TransitionOutcome::Applied);
    s.task(id).await.unwrap().unwrap()
}

async fn assert_gone<H: Harness>(h: &H, task: &Task) {
    let s = h.store();
    assert_eq!(s.task(task.id).await.unwrap(), None, "{}", task.reminder_id);
    assert!(s.attempts(task.id).await.unwrap().is_empty());
    assert!(
        matches!(
            s.payload(task).await,
            Err(StoreError::NotFound {
                what: "payload",
                ..
            })
        ),
        "the payload of {} goes with it",
        task.reminder_id
    );
}

async fn assert_kept<H: Harness>(h: &H, task: &Task) {
    let s = h.store();
    let now = s.task(task.id).await.unwrap();
    assert_eq!(
        now.map(|t| t.state),
        Some(task.state),
        "{}",
        task.reminder_id
    );
    assert!(s.payload(task).await.is_ok(), "{}", task.reminder_id);
}

pub async fn prune_takes_old_terminal_tasks_and_leaves_the_rest<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let live = destination(h, "live", Region::US).await;
    let crm_eu = destination(h, "crm-eu", Region::EU).await;

    // Ended at t0: 40 days old when pruned.
    let retried = task(h, "old-delivered", &crm, Region::US).await;
    let first = claim_only(h, Region::US, &[]).await;
    s.finish(
        &first.lease(),
        &first.task.destination_id,
        &retry_at(h.clock(), t0(), record(503)),
    )
    .await
    .unwrap();
    let second = claim_only(h, Region::US, &[]).await;
    assert_eq!(second.task.id, retried);
    s.finish(
        &second.lease(),
        &second.task.destination_id,
        &delivered(record(200)),
    )
    .await
    .unwrap();
    let old_delivered = s.task(retried).await.unwrap().unwrap();
    let old_failed = ended(h, "old-failed", &crm, Region::US, &[], false).await;
    let old_eu = ended(h, "old-eu", &crm_eu, Region::EU, &[], true).await;
    // Live since t0: leased (its lease long expired by then), waiting, and
    // failed then replayed.
    task(h, "leased", &live, Region::US).await;
    let leased = claim_only(h, Region::US, &[&crm]).await.task;
    let waiting = task(h, "waiting", &live, Region::US).await;
    let c = claim_only(h, Region::US, &[&crm]).await;
    s.finish(
        &c.lease(),
        &c.task.destination_id,
        &retry_at(h.clock(), t0() + Duration::days(100), record(503)),
    )
    .await
    .unwrap();
    let waiting = s.task(waiting).await.unwrap().unwrap();
    let replayed = ended(h, "replayed", &live, Region::US, &[&crm], false).await;
    let replayed = match s.replay(replayed.id, Duration::days(365)).await.unwrap() {
        Replayed::Replayed(t) => t,
        other => panic!("{other:?}"),
    };
    let pending = s
        .schedule(new_task("pending", &live, Region::US))
        .await
        .unwrap()
        .task;

    // Ended 40 days later: young when pruned. The live destination's due
    // rows are skipped so these are the ones claimed.
    h.clock().advance(Duration::days(40));
    let young_delivered = ended(h, "young-delivered", &crm, Region::US, &[&live], true).await;
    let young_failed = ended(h, "young-failed", &crm, Region::US, &[&live], false).await;

    let report = s
        .prune(&prune(Some(Region::US), Duration::days(30), 10))
        .await
        .unwrap();
    assert_eq!(
        report,
        PruneReport {
            tasks: 2,
            attempts: 3,
            payloads: 2,
            batches: 1,
        }
    );
    assert_gone(h, &old_delivered).await;
    assert_gone(h, &old_failed).await;
    for kept in [
        &old_eu,
        &leased,
        &waiting,
        &replayed,
        &pending,
        &young_delivered,
        &young_failed,
    ] {
        assert_kept(h, kept).await;
    }
    assert_eq!(s.attempts(young_failed.id).await.unwrap().len(), 1);

    // Every region when none is named.
    let report = s.prune(&prune(None, Duration::days(30), 10)).await.unwrap();
    assert_eq!((report.tasks, report.payloads), (1, 1));
    assert_gone(h, &old_eu).await;

    // The pair is free again: the same request is a new task, and would be
    // delivered again. Hence the age kept must outlast producers' retries.
    let again = s
        .schedule(new_task("old-delivered", &crm, Region::US))
        .await
        .unwrap();
    assert!(again.created);
    assert_ne!(again.task.id, old_delivered.id);
}

pub async fn prune_goes_in_batches_up_to_the_cutoff<H: Harness>(h: &H) {
    let s = h.store();
    let us = destination(h, "crm", Region::US).await;
    let eu = destination(h, "crm-eu", Region::EU).await;
    let mut ended_at_t0 = Vec::new();
    for i in 0..5 {
        ended_at_t0.push(ended(h, &format!("us-{i}"), &us, Region::US, &[], true).await);
    }
    for i in 0..4 {
        ended_at_t0.push(ended(h, &format!("eu-{i}"), &eu, Region::EU, &[], i % 2 == 0).await);
    }
    h.clock().advance(Duration::days(30));

    // Exactly 30 days old is not older than 30 days.
    let none = s.prune(&prune(None, Duration::days(30), 2)).await.unwrap();
    assert_eq!(none, PruneReport::default());

    // Batches of two: us 2+2+1, eu 2+2 (the empty batch that ends a run is
    // not counted).
    let older_than = Duration::days(30) - Duration::milliseconds(1);
    let report = s.prune(&prune(None, older_than, 2)).await.unwrap();
    assert_eq!(
        report,
        PruneReport {
            tasks: 9,
            attempts: 9,
            payloads: 9,
            batches: 5,
        }
    );
    for t in &ended_at_t0 {
        assert_gone(h, t).await;
    }
    let again = s.prune(&prune(None, older_than, 2)).await.unwrap();
    assert_eq!(again, PruneReport::default());
}

pub async fn prune_refuses_bad_requests<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let kept = ended(h, "kept", &d, Region::US, &[], true).await;
    h.clock().advance(Duration::days(1));
    let bad = [
        (prune(None, Duration::zero(), 0), "batch_size"),
        (
            prune(None, Duration::zero(), PruneRequest::MAX_BATCH_SIZE + 1),
            "batch_size",
        ),
        (prune(None, Duration::seconds(-1), 10), "older_than"),
        (
            prune(None, Duration::days(PruneRequest::MAX_AGE_DAYS + 1), 10),
            "older_than",
        ),
    ];
    for (request, field) in bad {
        match s.prune(&request).await {
            Err(StoreError::Invalid(e)) => assert_eq!(e.field, field, "{request:?}"),
            other => panic!("{request:?}: {other:?}"),
        }
    }
    assert_kept(h, &kept).await;
}

/// The key identifies the reminder, not the task: scheduled again after its
/// task was pruned, alone, in a batch or in another region, a reminder is
/// sent under the key its receiver has already seen.
pub async fn a_reminder_keeps_its_key_after_pruning<H: Harness>(h: &H) {
    let s = h.store();
    let us = destination(h, "crm", Region::US).await;
    let eu = destination(h, "crm-eu", Region::EU).await;
    let first = ended(h, "renewal-42", &us, Region::US, &[], true).await;
    let expected = idempotency_key(
        &TenantId::new("clinic-1").unwrap(),
        &ReminderId::new("renewal-42").unwrap(),
    );
    assert_eq!(first.idempotency_key, expected);
    let older_than = Duration::days(30);
    h.clock().advance(older_than + Duration::seconds(1));
    assert_eq!(
        s.prune(&prune(None, older_than, 10)).await.unwrap().tasks,
        1
    );

    // Alone, in the other region.
    let again = s
        .schedule(new_task("renewal-42", &eu, Region::EU))
        .await
        .unwrap();
    assert!(again.created);
    assert_ne!(again.task.id, first.id);
    assert_eq!(again.task.idempotency_key, expected);
    let c = claim_only(h, Region::EU, &[]).await;
    s.finish(&c.lease(), &c.task.destination_id, &delivered(record(200)))
        .await
        .unwrap();
    h.clock().advance(older_than + Duration::seconds(1));
    assert_eq!(
        s.prune(&prune(None, older_than, 10)).await.unwrap().tasks,
        1
    );

    // In a batch.
    let batch = s
        .schedule_many(vec![
            new_task("renewal-42", &us, Region::US),
            new_task("renewal-43", &us, Region::US),
        ])
        .await
        .unwrap();
    let keys: Vec<String> = batch
        .into_iter()
        .map(|answer| answer.unwrap().task.idempotency_key)
        .collect();
    assert_eq!(keys[0], expected);
    assert_ne!(keys[1], expected);
}
