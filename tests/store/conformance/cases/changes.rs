//! An operator's changes after scheduling: cancel, reschedule, erase,
//! retry now, and the settling of a change that waited for an attempt.

use remit::domain::{ClaimedTask, Payload, TenantId, WaitingChange};
use remit::store::{Cancel, Changes, Erase, Leases, Move, Reports, Reschedule, Schedule};

use super::*;
use crate::support::claim;

/// A move to `at` by an operator who may replay (and so may bring an
/// ended task back).
pub(super) fn to(at: chrono::DateTime<chrono::Utc>) -> Reschedule {
    Reschedule {
        not_before: at,
        payload: None,
        by: "tok_ops".into(),
        revive: true,
    }
}

pub(super) async fn state<H: Harness>(h: &H, id: TaskId) -> remit::domain::Task {
    h.store().task(id).await.unwrap().expect("the task")
}

pub(super) async fn claim_all<H: Harness>(h: &H) -> Vec<ClaimedTask> {
    h.store()
        .claim_due(&claim(Region::US, "c", 50))
        .await
        .unwrap()
}

pub async fn a_waiting_task_is_cancelled_and_never_claimed<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "renewal", &d, Region::US).await;
    let kept = task(h, "kept", &d, Region::US).await;
    match s.cancel(id, "tok_ops").await.unwrap() {
        Cancel::Cancelled(t) => {
            assert_eq!(t.state, TaskState::Cancelled);
            assert!(t.finalized_at.is_some());
            assert_eq!(t.cancelled.as_ref().unwrap().by, "tok_ops");
        }
        other => panic!("{other:?}"),
    }
    h.clock().advance(Duration::hours(1));
    let claimed: Vec<TaskId> = claim_all(h).await.iter().map(|c| c.task.id).collect();
    assert_eq!(claimed, vec![kept], "a cancelled task is never claimed");
    assert!(matches!(
        s.cancel(id, "tok_ops").await.unwrap(),
        Cancel::AlreadyCancelled(_)
    ));
    assert!(s.attempts(id).await.unwrap().is_empty(), "never tried");
    let counts = s.region_counts(Region::US).await.unwrap().counts;
    assert_eq!(
        (counts.cancelled, counts.delivered, counts.leased),
        (1, 0, 1)
    );
    assert!(matches!(
        s.cancel(TaskId::generate(), "tok_ops").await.unwrap(),
        Cancel::NotFound
    ));
}

pub async fn a_cancel_in_flight_waits_for_the_attempt_and_wins_over_a_retry<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "renewal", &d, Region::US).await;
    let held = claim_one(h).await;
    match s.cancel(id, "tok_ops").await.unwrap() {
        Cancel::AfterAttempt(t) => {
            assert_eq!(t.state, TaskState::Leased, "the lease is the holder's");
            assert_eq!(t.waiting_change, Some(WaitingChange::Cancel));
        }
        other => panic!("{other:?}"),
    }
    // Not settled while the attempt is in flight.
    assert_eq!(s.settle_changes(Region::US, 10).await.unwrap(), 0);
    // The attempt fails in a way that would be retried: its finish is the
    // holder's and applies, and no retry follows.
    let now = h.clock().now_param().unwrap();
    let outcome = s
        .finish(&held.lease(), &d, &retry_at(h.clock(), now, record(503)))
        .await
        .unwrap();
    assert_eq!(outcome, TransitionOutcome::Applied);
    h.clock().advance(Duration::minutes(5));
    assert!(claim_all(h).await.is_empty(), "never tried again");
    assert_eq!(s.settle_changes(Region::US, 10).await.unwrap(), 1);
    let t = state(h, id).await;
    assert_eq!((t.state, t.waiting_change), (TaskState::Cancelled, None));
    let outcomes: Vec<_> = s
        .attempts(id)
        .await
        .unwrap()
        .iter()
        .map(|a| a.outcome)
        .collect();
    assert_eq!(outcomes, vec![AttemptOutcome::RetryWait]);
}

pub async fn a_cancel_in_flight_lapses_when_the_attempt_delivers<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "renewal", &d, Region::US).await;
    let held = claim_one(h).await;
    assert!(matches!(
        s.cancel(id, "tok_ops").await.unwrap(),
        Cancel::AfterAttempt(_)
    ));
    s.finish(&held.lease(), &d, &delivered(record(200)))
        .await
        .unwrap();
    assert_eq!(s.settle_changes(Region::US, 10).await.unwrap(), 1);
    let t = state(h, id).await;
    assert_eq!((t.state, t.waiting_change), (TaskState::Delivered, None));
    assert!(t.cancelled.is_some(), "the late cancel stays on record");
    assert!(matches!(
        s.cancel(id, "tok_ops").await.unwrap(),
        Cancel::Ended(_)
    ));
}

pub async fn a_cancel_after_a_lease_ran_out_logs_the_lost_attempt<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "renewal", &d, Region::US).await;
    let held = claim_one(h).await;
    assert!(matches!(
        s.cancel(id, "tok_ops").await.unwrap(),
        Cancel::AfterAttempt(_)
    ));
    h.clock().advance(Duration::minutes(5));
    assert!(
        claim_all(h).await.is_empty(),
        "an expired lease with a cancel is not reclaimed"
    );
    assert_eq!(s.settle_changes(Region::US, 10).await.unwrap(), 1);
    assert_eq!(state(h, id).await.state, TaskState::Cancelled);
    let attempts = s.attempts(id).await.unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].outcome, AttemptOutcome::Abandoned);
    // The holder comes back too late: fenced.
    assert_eq!(
        s.finish(&held.lease(), &d, &delivered(record(200)))
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );
}

pub async fn delivered_and_failed_tasks_are_not_cancelled<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let sent = task(h, "sent", &d, Region::US).await;
    let c = claim_one(h).await;
    s.finish(&c.lease(), &d, &delivered(record(200)))
        .await
        .unwrap();
    let failed = task(h, "failed", &d, Region::US).await;
    let c = claim_one(h).await;
    s.fail(&c.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    for id in [sent, failed] {
        match s.cancel(id, "tok_ops").await.unwrap() {
            Cancel::Ended(t) => assert!(t.cancelled.is_none(), "nothing written"),
            other => panic!("{other:?}"),
        }
    }
}

pub async fn a_reschedule_moves_the_deadline_and_keeps_the_key<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "renewal", &d, Region::US).await;
    let before = state(h, id).await;
    let later = t0() + Duration::days(2);
    let moved = match s.reschedule(id, &to(later)).await.unwrap() {
        Move::Moved(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!((moved.not_before, moved.available_at), (later, later));
    assert_eq!(
        moved.retry_horizon_at - moved.not_before,
        before.retry_horizon_at - before.not_before,
        "the horizon keeps its length"
    );
    h.clock().advance(Duration::hours(1));
    assert!(claim_all(h).await.is_empty(), "not before its new deadline");
    h.clock().advance(Duration::days(2));
    let claimed = claim_all(h).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.idempotency_key, before.idempotency_key);

    // Earlier works too, and a new payload replaces the old one.
    let early = task(h, "early", &d, Region::US).await;
    h.move_deadline(early, t0() + Duration::days(5)).await;
    let body = Payload::json(r#"{"renewal":"2026-10-15"}"#);
    let change = Reschedule {
        payload: Some(body.clone()),
        ..to(t0())
    };
    assert!(matches!(
        s.reschedule(early, &change).await.unwrap(),
        Move::Moved(_)
    ));
    let claimed = claim_all(h).await;
    assert_eq!(claimed.len(), 1);
    let task = state(h, early).await;
    assert_eq!(s.payload(&task).await.unwrap(), body);
}

pub async fn a_failed_or_cancelled_task_comes_back_when_rescheduled<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let cancelled = task(h, "cancelled", &d, Region::US).await;
    s.cancel(cancelled, "tok_ops").await.unwrap();
    let failed = task(h, "failed", &d, Region::US).await;
    let c = claim_one(h).await;
    s.fail(&c.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    let now = h.clock().now_param().unwrap();
    for id in [cancelled, failed] {
        match s.reschedule(id, &to(now)).await.unwrap() {
            Move::Moved(t) => {
                assert_eq!(t.state, TaskState::Pending);
                assert_eq!(t.finalized_at, None);
                assert_eq!(t.attempts_since_replay(), 0, "a fresh budget");
                assert!(t.cancelled.is_none());
            }
            other => panic!("{other:?}"),
        }
    }
    let mut claimed: Vec<TaskId> = claim_all(h).await.iter().map(|c| c.task.id).collect();
    claimed.sort();
    let mut both = vec![cancelled, failed];
    both.sort();
    assert_eq!(claimed, both);
    assert_eq!(
        state(h, failed).await.attempt_count,
        2,
        "numbers keep rising"
    );
}

pub async fn a_reschedule_in_flight_waits_and_a_delivered_task_is_refused<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "renewal", &d, Region::US).await;
    let held = claim_one(h).await;
    let later = t0() + Duration::days(7);
    assert!(matches!(
        s.reschedule(id, &to(later)).await.unwrap(),
        Move::AfterAttempt(_)
    ));
    let now = h.clock().now_param().unwrap();
    s.finish(&held.lease(), &d, &retry_at(h.clock(), now, record(503)))
        .await
        .unwrap();
    assert!(
        claim_all(h).await.is_empty(),
        "the move waits to be settled"
    );
    assert_eq!(s.settle_changes(Region::US, 10).await.unwrap(), 1);
    let t = state(h, id).await;
    assert_eq!(
        (t.not_before, t.available_at, t.waiting_change),
        (later, later, None)
    );
    assert_eq!(t.attempt_count, 1);
    h.clock().advance(Duration::days(7));
    let again = claim_all(h).await;
    assert_eq!(again.len(), 1);
    s.finish(&again[0].lease(), &d, &delivered(record(200)))
        .await
        .unwrap();
    assert!(matches!(
        s.reschedule(id, &to(later)).await.unwrap(),
        Move::Refused(_)
    ));
    assert!(matches!(
        s.reschedule(TaskId::generate(), &to(later)).await.unwrap(),
        Move::NotFound
    ));
}

pub async fn erase_drops_the_payload_keeps_the_record_and_cancels<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let waiting = task(h, "waiting", &d, Region::US).await;
    let t = match s.erase(waiting, "tok_ops").await.unwrap() {
        Erase::Erased(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(t.state, TaskState::Cancelled);
    assert!(t.payload_erased_at.is_some());
    assert!(matches!(
        s.payload(&t).await,
        Err(StoreError::Erased { .. })
    ));
    // The same request again cannot be compared with what is gone: a
    // conflict of its own, never a failure of the batch.
    let again = s
        .schedule_many(vec![new_task("waiting", &d, Region::US)])
        .await
        .unwrap();
    assert!(
        matches!(again[..], [Err(StoreError::Conflict { .. })]),
        "{again:?}"
    );
    // Erasing again answers the same and keeps the first time.
    match s.erase(waiting, "tok_ops").await.unwrap() {
        Erase::Erased(again) => assert_eq!(again.payload_erased_at, t.payload_erased_at),
        other => panic!("{other:?}"),
    }

    let sent = task(h, "sent", &d, Region::US).await;
    let c = claim_one(h).await;
    s.finish(&c.lease(), &d, &delivered(record(200)))
        .await
        .unwrap();
    match s.erase(sent, "tok_ops").await.unwrap() {
        Erase::Erased(t) => {
            assert_eq!(t.state, TaskState::Delivered, "the record stays");
            assert!(t.payload_erased_at.is_some());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.attempts(sent).await.unwrap().len(), 1, "the log stays");
    // Moving an erased task needs a new payload.
    assert!(matches!(
        s.reschedule(waiting, &to(t0())).await.unwrap(),
        Move::Refused(_)
    ));
    let back = Reschedule {
        payload: Some(Payload::json(r#"{"again":true}"#)),
        ..to(t0())
    };
    match s.reschedule(waiting, &back).await.unwrap() {
        Move::Moved(t) => assert_eq!(t.payload_erased_at, None),
        other => panic!("{other:?}"),
    }
}

pub async fn a_tenants_erasure_goes_in_rounds<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    for reminder in ["a", "b", "c"] {
        task(h, reminder, &d, Region::US).await;
    }
    let tenant = TenantId::new("clinic-1").unwrap();
    let first = s.erase_tenant(&tenant, "tok_ops", 2).await.unwrap();
    assert_eq!((first.erased, first.cancelled), (2, 2));
    let second = s.erase_tenant(&tenant, "tok_ops", 2).await.unwrap();
    assert_eq!((second.erased, second.cancelled), (1, 1));
    let third = s.erase_tenant(&tenant, "tok_ops", 2).await.unwrap();
    assert_eq!(third.erased, 0);
    let other = TenantId::new("clinic-2").unwrap();
    assert_eq!(
        s.erase_tenant(&other, "tok_ops", 2).await.unwrap().erased,
        0
    );
}

pub async fn retry_now_brings_waiting_retries_forward<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let other = destination(h, "erp", Region::US).await;
    let id = task(h, "renewal", &d, Region::US).await;
    let held = claim_one(h).await;
    let now = h.clock().now_param().unwrap();
    s.finish(
        &held.lease(),
        &d,
        &retry_at(h.clock(), now + Duration::hours(1), record(503)),
    )
    .await
    .unwrap();
    assert!(claim_all(h).await.is_empty(), "waiting out its backoff");
    assert_eq!(s.retry_now(&other, None).await.unwrap(), 0);
    assert_eq!(s.retry_now(&d, None).await.unwrap(), 1);
    let again = claim_all(h).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].task.id, id);
    assert_eq!(again[0].task.attempt_count, 2, "the count is kept");
    // Nothing waits for a retry now.
    assert_eq!(s.retry_now(&d, None).await.unwrap(), 0);
}
