//! Transitions out of `leased`: fencing, repeats, release, abandon,
//! extend, and hand-backs against pauses and the horizon.

use super::*;
use remit::store::{Destinations, Leases, Schedule};

pub async fn a_stale_lease_changes_nothing<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::EU).await;
    let id = task(h, "r1", &d, Region::EU).await;
    let old = s
        .claim_due(&claim(Region::EU, "old", 5))
        .await
        .unwrap()
        .remove(0);
    h.clock().advance(Duration::seconds(31));
    let new = s
        .claim_due(&claim(Region::EU, "new", 5))
        .await
        .unwrap()
        .remove(0);
    let stale = old.lease();
    let fenced = TransitionOutcome::Fenced;
    assert_eq!(
        s.finish(&stale, &d, &delivered(record(200))).await.unwrap(),
        fenced
    );
    let later = t0() + Duration::hours(1);
    assert_eq!(
        s.finish(&stale, &d, &retry_at(h.clock(), later, record(429)))
            .await
            .unwrap(),
        fenced
    );
    let reason = FailureReason::Status(400);
    assert_eq!(s.fail(&stale, &reason, &record(400)).await.unwrap(), fenced);
    assert_eq!(s.abandon(&stale, &record(200)).await.unwrap(), fenced);
    assert_eq!(s.hand_back(&stale, None).await.unwrap(), fenced);
    assert_eq!(
        s.extend_lease(&stale, Duration::hours(1)).await.unwrap(),
        fenced
    );
    let row = s.task(id).await.unwrap().unwrap();
    assert_eq!(row, new.task, "the new holder's row is untouched");
    let fenced_rows = s
        .attempts(id)
        .await
        .unwrap()
        .iter()
        .filter(|a| a.outcome == AttemptOutcome::Fenced)
        .count();
    assert_eq!(fenced_rows, 4, "each stale finish is logged, nothing else");

    assert_eq!(
        s.finish(
            &new.lease(),
            &new.task.destination_id,
            &delivered(record(200))
        )
        .await
        .unwrap(),
        TransitionOutcome::Applied
    );
    assert_eq!(
        s.finish(
            &new.lease(),
            &new.task.destination_id,
            &retry_at(h.clock(), later, record(429))
        )
        .await
        .unwrap(),
        fenced
    );
    assert_eq!(
        s.task(id).await.unwrap().unwrap().state,
        TaskState::Delivered
    );
    h.clock().advance(Duration::days(10));
    assert!(s
        .claim_due(&claim(Region::EU, "any", 5))
        .await
        .unwrap()
        .is_empty());
    let missing = remit::domain::Lease {
        task_id: TaskId::generate(),
        ..new.lease()
    };
    assert_eq!(
        s.finish(&missing, &d, &delivered(record(200)))
            .await
            .unwrap(),
        TransitionOutcome::NotFound
    );
}

pub async fn finishes_are_idempotent_for_their_own_lease<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "r1", &d, Region::US).await;
    let c = s
        .claim_due(&claim(Region::US, "c", 5))
        .await
        .unwrap()
        .remove(0);
    let reason = FailureReason::Status(410);
    assert_eq!(
        s.fail(&c.lease(), &reason, &record(410)).await.unwrap(),
        TransitionOutcome::Applied
    );
    let first = s.task(id).await.unwrap().unwrap();
    assert_eq!(
        s.fail(&c.lease(), &reason, &record(410)).await.unwrap(),
        TransitionOutcome::Applied
    );
    assert_eq!(s.task(id).await.unwrap().unwrap(), first);
    assert_eq!(first.failure_reason.as_deref(), Some("http_410"));
    assert_eq!(s.attempts(id).await.unwrap().len(), 1);
}

pub async fn release_abandon_and_extend<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "r1", &d, Region::US).await;
    let c = s
        .claim_due(&claim(Region::US, "c", 5))
        .await
        .unwrap()
        .remove(0);
    let later = t0() + Duration::seconds(10);
    assert_eq!(
        s.hand_back(&c.lease(), Some(later - t0())).await.unwrap(),
        TransitionOutcome::Applied
    );
    let row = s.task(id).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.attempt_count, row.available_at),
        (TaskState::Pending, 0, later)
    );
    assert!(s.attempts(id).await.unwrap().is_empty());

    h.clock().set(later);
    let c = s
        .claim_due(&claim(Region::US, "c", 5))
        .await
        .unwrap()
        .remove(0);
    h.clock().advance(Duration::seconds(20));
    assert_eq!(
        s.extend_lease(&c.lease(), Duration::seconds(30))
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    h.clock().advance(Duration::seconds(20));
    assert!(s
        .claim_due(&claim(Region::US, "other", 5))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        s.abandon(&c.lease(), &record(200)).await.unwrap(),
        TransitionOutcome::Applied
    );
    let again = s.claim_due(&claim(Region::US, "other", 5)).await.unwrap();
    assert_eq!((again.len(), again[0].task.attempt_count), (1, 2));
    let outcomes: Vec<_> = s
        .attempts(id)
        .await
        .unwrap()
        .iter()
        .map(|a| a.outcome)
        .collect();
    assert_eq!(outcomes, [AttemptOutcome::Abandoned]);
}

pub async fn a_hand_back_waits_for_the_pause_and_ends_a_tried_task_at_the_horizon<H: Harness>(
    h: &H,
) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let first = task(h, "r1", &d, Region::US).await;
    let second = task(h, "r2", &d, Region::US).await;
    let third = task(h, "r3", &d, Region::US).await;
    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    let lease_of = |claimed: &[remit::domain::ClaimedTask], id| {
        claimed
            .iter()
            .find(|c| c.task.id == id)
            .map(|c| c.lease())
            .unwrap()
    };

    // Not yet attempted: a delay past the horizon is kept as it is (the
    // task still gets its first attempt), and the task waits for it.
    let horizon = s.task(third).await.unwrap().unwrap().retry_horizon_at;
    let after = horizon - t0() + Duration::hours(1);
    assert_eq!(
        s.hand_back(&lease_of(&claimed, third), Some(after))
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    let row = s.task(third).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.available_at),
        (TaskState::Pending, t0() + after)
    );

    // Paused by a sibling's receiver: handed back due when the pause ends,
    // not at once, and not counted.
    let pause = Duration::seconds(120);
    s.pause_destination(&d, pause).await.unwrap();
    assert_eq!(
        s.hand_back(&lease_of(&claimed, first), None).await.unwrap(),
        TransitionOutcome::Applied
    );
    let row = s.task(first).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.attempt_count, row.available_at),
        (TaskState::Pending, 0, t0() + pause)
    );

    // A pause that outlasts the horizon does not end a task never tried:
    // it waits for the pause's end.
    let long = horizon - t0() + Duration::seconds(1);
    s.pause_destination(&d, long).await.unwrap();
    assert_eq!(
        s.hand_back(&lease_of(&claimed, second), None)
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    let row = s.task(second).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.attempt_count, row.available_at),
        (TaskState::Pending, 0, t0() + long)
    );
    assert!(row.finalized_at.is_none());

    // Tried once (the attempt abandoned), then claimed again: the delay is
    // clamped to the horizon, and a pause past the horizon ends the task.
    let other = destination(h, "billing", Region::US).await;
    let fourth = task(h, "r4", &other, Region::US).await;
    let fifth = task(h, "r5", &other, Region::US).await;
    for c in s.claim_due(&claim(Region::US, "c", 5)).await.unwrap() {
        s.abandon(&c.lease(), &record(500)).await.unwrap();
    }
    let again = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert_eq!(again.len(), 2);
    let horizon = s.task(fourth).await.unwrap().unwrap().retry_horizon_at;
    assert_eq!(
        s.hand_back(&lease_of(&again, fourth), Some(after))
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    let row = s.task(fourth).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.attempt_count, row.available_at),
        (TaskState::RetryWait, 1, horizon)
    );
    s.pause_destination(&other, long).await.unwrap();
    assert_eq!(
        s.hand_back(&lease_of(&again, fifth), None).await.unwrap(),
        TransitionOutcome::PastHorizon
    );
    let row = s.task(fifth).await.unwrap().unwrap();
    assert_eq!(row.state, TaskState::Failed);
    assert_eq!(row.failure_reason.as_deref(), Some("retry_horizon"));
    assert!(row.finalized_at.is_some());
}
