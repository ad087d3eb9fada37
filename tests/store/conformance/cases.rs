//! The cases every store must pass. Only the `Store` trait is used here.

use chrono::Duration;
use remit::domain::{
    AttemptOutcome, AttemptRecord, DestinationId, FailureReason, NewDestination, Payload,
    ReconcileRequest, Region, TaskId, TaskState,
};
use remit::store::{Replayed, Store, StoreError, Tokens, TransitionOutcome};

use super::Harness;
use crate::support::{claim, new_task, t0};

async fn destination<H: Harness>(h: &H, id: &str, region: Region) -> DestinationId {
    let id = DestinationId::new(id).unwrap();
    let new = NewDestination::new(id.clone(), region, "http://127.0.0.1:9/", None).unwrap();
    h.store().add_destination(new).await.unwrap();
    id
}

async fn task<H: Harness>(h: &H, reminder: &str, d: &DestinationId, region: Region) -> TaskId {
    h.store()
        .schedule(new_task(reminder, d, region))
        .await
        .unwrap()
        .task
        .id
}

fn record(status: u16) -> AttemptRecord {
    AttemptRecord {
        http_status: Some(status),
        ..AttemptRecord::default()
    }
}

pub async fn claims_respect_deadlines_and_available_at<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Us).await;
    let id = task(h, "r1", &d, Region::Us).await;
    h.clock().set(t0() - Duration::milliseconds(1));
    assert!(s
        .claim_due(&claim(Region::Us, "c", 5))
        .await
        .unwrap()
        .is_empty());
    h.clock().set(t0());
    let c = s
        .claim_due(&claim(Region::Us, "c", 5))
        .await
        .unwrap()
        .remove(0);
    let next = t0() + Duration::seconds(90);
    let outcome = s
        .move_to_retry_wait(&c.lease(), next, &record(429))
        .await
        .unwrap();
    assert_eq!(outcome, TransitionOutcome::Applied);
    h.clock().set(next - Duration::milliseconds(1));
    assert!(s
        .claim_due(&claim(Region::Us, "c", 5))
        .await
        .unwrap()
        .is_empty());
    h.clock().set(next);
    let again = s.claim_due(&claim(Region::Us, "c", 5)).await.unwrap();
    assert_eq!(
        (again.len(), again[0].task.id, again[0].task.attempt_count),
        (1, id, 2)
    );
}

pub async fn an_expired_lease_is_reclaimed_and_logged<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Eu).await;
    let id = task(h, "r1", &d, Region::Eu).await;
    let old = s
        .claim_due(&claim(Region::Eu, "old", 5))
        .await
        .unwrap()
        .remove(0);
    h.clock().advance(Duration::seconds(29));
    assert!(s
        .claim_due(&claim(Region::Eu, "new", 5))
        .await
        .unwrap()
        .is_empty());
    h.clock().advance(Duration::seconds(1));
    let new = s
        .claim_due(&claim(Region::Eu, "new", 5))
        .await
        .unwrap()
        .remove(0);
    assert!(new.reclaimed && new.lease_token > old.lease_token);
    assert_eq!(new.task.idempotency_key, old.task.idempotency_key);
    let log = s.attempts(id).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].outcome, log[0].consumer_id.as_str()),
        (AttemptOutcome::Abandoned, "old")
    );
}

pub async fn a_stale_lease_changes_nothing<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Eu).await;
    let id = task(h, "r1", &d, Region::Eu).await;
    let old = s
        .claim_due(&claim(Region::Eu, "old", 5))
        .await
        .unwrap()
        .remove(0);
    h.clock().advance(Duration::seconds(31));
    let new = s
        .claim_due(&claim(Region::Eu, "new", 5))
        .await
        .unwrap()
        .remove(0);
    let stale = old.lease();
    let fenced = TransitionOutcome::Fenced;
    assert_eq!(
        s.mark_delivered(&stale, &record(200)).await.unwrap(),
        fenced
    );
    let later = t0() + Duration::hours(1);
    assert_eq!(
        s.move_to_retry_wait(&stale, later, &record(429))
            .await
            .unwrap(),
        fenced
    );
    let reason = FailureReason::Status(400);
    assert_eq!(s.fail(&stale, &reason, &record(400)).await.unwrap(), fenced);
    assert_eq!(s.abandon(&stale, &record(200)).await.unwrap(), fenced);
    assert_eq!(s.release(&stale, None).await.unwrap(), fenced);
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
        s.mark_delivered(&new.lease(), &record(200)).await.unwrap(),
        TransitionOutcome::Applied
    );
    assert_eq!(
        s.move_to_retry_wait(&new.lease(), later, &record(429))
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
        .claim_due(&claim(Region::Eu, "any", 5))
        .await
        .unwrap()
        .is_empty());
    let missing = remit::domain::Lease {
        task_id: TaskId::random(),
        ..new.lease()
    };
    assert_eq!(
        s.mark_delivered(&missing, &record(200)).await.unwrap(),
        TransitionOutcome::NotFound
    );
}

pub async fn finishes_are_idempotent_for_their_own_lease<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Us).await;
    let id = task(h, "r1", &d, Region::Us).await;
    let c = s
        .claim_due(&claim(Region::Us, "c", 5))
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
    let d = destination(h, "crm", Region::Us).await;
    let id = task(h, "r1", &d, Region::Us).await;
    let c = s
        .claim_due(&claim(Region::Us, "c", 5))
        .await
        .unwrap()
        .remove(0);
    let later = t0() + Duration::seconds(10);
    assert_eq!(
        s.release(&c.lease(), Some(later - t0())).await.unwrap(),
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
        .claim_due(&claim(Region::Us, "c", 5))
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
        .claim_due(&claim(Region::Us, "other", 5))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        s.abandon(&c.lease(), &record(200)).await.unwrap(),
        TransitionOutcome::Applied
    );
    let again = s.claim_due(&claim(Region::Us, "other", 5)).await.unwrap();
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

pub async fn pauses_hold_a_destination<H: Harness>(h: &H) {
    let s = h.store();
    let held = destination(h, "held", Region::Us).await;
    let free = destination(h, "free", Region::Us).await;
    task(h, "h1", &held, Region::Us).await;
    task(h, "f1", &free, Region::Us).await;
    let until = t0() + Duration::seconds(120);
    let pause = Duration::seconds(120);
    assert_eq!(s.pause_destination(&held, pause).await.unwrap(), until);
    assert_eq!(
        s.pause_destination(&held, Duration::zero()).await.unwrap(),
        until,
        "the later pause wins"
    );
    let claimed = s.claim_due(&claim(Region::Us, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.destination_id, free);
    h.clock().set(until);
    let claimed = s.claim_due(&claim(Region::Us, "c", 5)).await.unwrap();
    assert!(claimed.iter().any(|c| c.task.destination_id == held));
    let ghost = DestinationId::new("ghost").unwrap();
    assert!(matches!(
        s.pause_destination(&ghost, Duration::zero()).await,
        Err(StoreError::NotFound { .. })
    ));
}

pub async fn claims_are_capped_and_round_robin<H: Harness>(h: &H) {
    let s = h.store();
    let busy = destination(h, "busy", Region::Us).await;
    for i in 0..30 {
        task(h, &format!("b{i}"), &busy, Region::Us).await;
    }
    for name in ["q1", "q2"] {
        let d = destination(h, name, Region::Us).await;
        for i in 0..3 {
            task(h, &format!("{name}-{i}"), &d, Region::Us).await;
        }
    }
    let mut request = claim(Region::Us, "c", 8);
    request.per_destination_cap = 4;
    let claimed = s.claim_due(&request).await.unwrap();
    assert_eq!(claimed.len(), 8);
    let from_busy = claimed
        .iter()
        .filter(|c| c.task.destination_id == busy)
        .count();
    assert!(from_busy <= 4, "{from_busy} from one destination");
    let destinations: std::collections::HashSet<_> = claimed
        .iter()
        .map(|c| c.task.destination_id.clone())
        .collect();
    assert_eq!(destinations.len(), 3);
}

pub async fn regions_are_isolated<H: Harness>(h: &H) {
    let s = h.store();
    let us = destination(h, "us", Region::Us).await;
    let eu = destination(h, "eu", Region::Eu).await;
    task(h, "u", &us, Region::Us).await;
    task(h, "e", &eu, Region::Eu).await;
    let claimed = s.claim_due(&claim(Region::Eu, "c", 10)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.region, Region::Eu);
}

pub async fn scheduling_is_idempotent_and_validated<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Eu).await;
    let first = s.schedule(new_task("r1", &d, Region::Eu)).await.unwrap();
    assert!(first.created);
    assert_eq!(first.task.state, TaskState::Pending);
    let again = s.schedule(new_task("r1", &d, Region::Eu)).await.unwrap();
    assert!(!again.created);
    assert_eq!(again.task, first.task);
    let mut changed = new_task("r1", &d, Region::Eu);
    changed.payload = Payload::json("{}");
    assert!(
        matches!(s.schedule(changed).await, Err(StoreError::Conflict { differs, .. }) if differs == "payload")
    );
    let mut wrong_region = new_task("r2", &d, Region::Us);
    wrong_region.region = Region::Us;
    assert!(
        matches!(s.schedule(wrong_region).await, Err(StoreError::Invalid(e)) if e.field == "region")
    );
    let nowhere = DestinationId::new("nowhere").unwrap();
    assert!(
        matches!(s.schedule(new_task("r3", &nowhere, Region::Eu)).await, Err(StoreError::Invalid(e)) if e.field == "destination_id")
    );
    assert_eq!(
        s.payload(&first.task).await.unwrap(),
        new_task("r1", &d, Region::Eu).payload
    );
    let other = h
        .with_key(remit::payload_crypto::PayloadKey::from_bytes([9; 32]))
        .await;
    let opened = other.payload(&first.task).await;
    assert!(
        matches!(opened, Err(StoreError::Payload(_))),
        "a payload sealed under another key must not open: {opened:?}"
    );
}

pub async fn the_token_bucket_is_shared<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Us).await;
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 2).await.unwrap(),
        Tokens::Granted(2)
    );
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 2).await.unwrap(),
        Tokens::Granted(1)
    );
    let wait = std::time::Duration::from_millis(200);
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 1).await.unwrap(),
        Tokens::WaitFor(wait)
    );
    h.clock().advance(Duration::hours(1));
    assert_eq!(
        s.take_tokens(&d, 5.0, 3, 10).await.unwrap(),
        Tokens::Granted(3)
    );
}

pub async fn replay_and_reconcile<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Us).await;
    let failed = task(h, "failed", &d, Region::Us).await;
    let c = s
        .claim_due(&claim(Region::Us, "c", 1))
        .await
        .unwrap()
        .remove(0);
    s.fail(&c.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    let stuck = task(h, "stuck", &d, Region::Us).await;
    let c = s
        .claim_due(&claim(Region::Us, "gone", 1))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(c.task.id, stuck);
    h.clock().advance(Duration::hours(1));
    let request = ReconcileRequest {
        region: Some(Region::Us),
        older_than: Duration::minutes(15),
        reclaim: true,
        ledger: None,
        list_limit: 10,
    };
    let report = s.reconcile(&request).await.unwrap();
    assert_eq!((report.expired_leases.count, report.reclaimed), (1, 1));
    assert_eq!(report.terminal, vec![("max_attempts".to_owned(), 1)]);
    assert_eq!(
        s.task(stuck).await.unwrap().unwrap().state,
        TaskState::RetryWait
    );
    match s.replay(failed, Duration::hours(2)).await.unwrap() {
        Replayed::Replayed(t) => assert_eq!(
            (t.state, t.attempt_count, t.attempts_since_replay()),
            (TaskState::Pending, 1, 0)
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.replay(failed, Duration::hours(2)).await.unwrap(),
        Replayed::NotFailed(_)
    ));
}

pub async fn replay_keeps_attempt_numbers_rising<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Us).await;
    let id = task(h, "replayed", &d, Region::Us).await;
    let first = claim_one(h).await;
    s.move_to_retry_wait(&first.lease(), t0(), &record(503))
        .await
        .unwrap();
    let second = claim_one(h).await;
    s.fail(&second.lease(), &FailureReason::MaxAttempts, &record(503))
        .await
        .unwrap();

    match s.replay(id, Duration::hours(2)).await.unwrap() {
        Replayed::Replayed(t) => {
            assert_eq!(t.attempt_count, 2, "a replay keeps the count");
            assert_eq!(t.attempts_since_replay(), 0, "and grants a fresh budget");
        }
        other => panic!("{other:?}"),
    }
    // A lease handed back unsent after the replay is not an attempt: the
    // task is pending again, as a fresh one would be.
    let handed_back = claim_one(h).await;
    s.release(&handed_back.lease(), None).await.unwrap();
    assert_eq!(s.task(id).await.unwrap().unwrap().state, TaskState::Pending);
    let third = claim_one(h).await;
    assert_eq!(third.lease().attempt, 3);
    assert_eq!(third.task.attempts_since_replay(), 1);
    s.mark_delivered(&third.lease(), &record(200))
        .await
        .unwrap();

    let numbers: Vec<i32> = s
        .attempts(id)
        .await
        .unwrap()
        .iter()
        .map(|a| a.attempt_number)
        .collect();
    assert_eq!(numbers, vec![1, 2, 3], "strictly increasing and unique");
}

async fn claim_one<H: Harness>(h: &H) -> remit::domain::ClaimedTask {
    h.clock().advance(Duration::hours(1));
    let mut claimed = h
        .store()
        .claim_due(&claim(Region::Us, "c", 1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "one task due");
    claimed.remove(0)
}

pub async fn a_hand_back_waits_for_the_pause_and_ends_at_the_horizon<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Us).await;
    let first = task(h, "r1", &d, Region::Us).await;
    let second = task(h, "r2", &d, Region::Us).await;
    let third = task(h, "r3", &d, Region::Us).await;
    let claimed = s.claim_due(&claim(Region::Us, "c", 5)).await.unwrap();
    let lease_of = |id| {
        claimed
            .iter()
            .find(|c| c.task.id == id)
            .map(|c| c.lease())
            .unwrap()
    };

    // A delay is an estimate: never past the horizon, and no failure while
    // something can still happen before it.
    let horizon = s.task(third).await.unwrap().unwrap().retry_horizon_at;
    let after = horizon - t0() + Duration::hours(1);
    assert_eq!(
        s.release(&lease_of(third), Some(after)).await.unwrap(),
        TransitionOutcome::Applied
    );
    let row = s.task(third).await.unwrap().unwrap();
    assert_eq!((row.state, row.available_at), (TaskState::Pending, horizon));

    // Paused by a sibling's receiver: handed back due when the pause ends,
    // not at once, and not counted.
    let pause = Duration::seconds(120);
    s.pause_destination(&d, pause).await.unwrap();
    assert_eq!(
        s.release(&lease_of(first), None).await.unwrap(),
        TransitionOutcome::Applied
    );
    let row = s.task(first).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.attempt_count, row.available_at),
        (TaskState::Pending, 0, t0() + pause)
    );

    // A pause that outlasts the horizon: the hand-back ends the task.
    s.pause_destination(&d, horizon - t0() + Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(
        s.release(&lease_of(second), None).await.unwrap(),
        TransitionOutcome::PastHorizon
    );
    let row = s.task(second).await.unwrap().unwrap();
    assert_eq!(row.state, TaskState::Failed);
    assert_eq!(row.failure_reason.as_deref(), Some("retry_horizon"));
    assert!(row.finalized_at.is_some());
}

pub async fn a_claim_skips_the_destinations_it_names<H: Harness>(h: &H) {
    let s = h.store();
    let busy = destination(h, "busy", Region::Us).await;
    let free = destination(h, "free", Region::Us).await;
    task(h, "b1", &busy, Region::Us).await;
    task(h, "f1", &free, Region::Us).await;
    let mut request = claim(Region::Us, "c", 5);
    request.skip = vec![busy.clone()];
    let claimed = s.claim_due(&request).await.unwrap();
    assert_eq!(
        claimed
            .iter()
            .map(|c| c.task.destination_id.clone())
            .collect::<Vec<_>>(),
        [free]
    );
    let claimed = s.claim_due(&claim(Region::Us, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1, "left for a claim that does not skip it");
    assert_eq!(claimed[0].task.destination_id, busy);
}

pub async fn a_batch_answers_each_task_as_schedule_would<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::Eu).await;
    let existing = s.schedule(new_task("old", &d, Region::Eu)).await.unwrap();
    let mut conflicting = new_task("old", &d, Region::Eu);
    conflicting.payload = Payload::json("{}");
    let nowhere = DestinationId::new("nowhere").unwrap();
    let batch = vec![
        new_task("a", &d, Region::Eu),
        new_task("old", &d, Region::Eu),
        conflicting,
        new_task("lost", &nowhere, Region::Eu),
        new_task("a", &d, Region::Eu),
        new_task("b", &d, Region::Eu),
    ];
    let answers = s.schedule_many(batch).await.unwrap();
    assert_eq!(answers.len(), 6, "one answer per task, in order");
    let a = answers[0].as_ref().unwrap();
    assert!(a.created);
    let repeat = answers[1].as_ref().unwrap();
    assert!(!repeat.created);
    assert_eq!(repeat.task, existing.task);
    assert!(
        matches!(&answers[2], Err(StoreError::Conflict { differs, .. }) if differs == "payload")
    );
    assert!(matches!(&answers[3], Err(StoreError::Invalid(e)) if e.field == "destination_id"));
    let twice = answers[4].as_ref().unwrap();
    assert!(!twice.created, "a repeat within the batch is a repeat");
    assert_eq!(twice.task.id, a.task.id);
    let b = answers[5].as_ref().unwrap();
    assert!(b.created);
    // Written whole: each created task opens to its own payload.
    assert_eq!(
        s.payload(&b.task).await.unwrap(),
        new_task("b", &d, Region::Eu).payload
    );
    assert_eq!(
        s.payload(&existing.task).await.unwrap(),
        new_task("old", &d, Region::Eu).payload,
        "a conflict in a batch leaves the stored task alone"
    );
    assert!(s.schedule_many(Vec::new()).await.unwrap().is_empty());
}
