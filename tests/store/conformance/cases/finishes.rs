//! Finishing many attempts at once: each row keeps its own fencing, the
//! answers come back in order, and a pause is written with its attempt.

use remit::policy::{Decision, Transition};
use remit::store::{Destinations, Finish, Leases, Schedule};

use super::*;

fn decision(transition: Transition, status: u16, pause: Option<Duration>) -> Decision {
    let received = t0();
    Decision {
        transition,
        pause_destination_until: pause.map(|p| received + p),
        record: AttemptRecord {
            http_status: Some(status),
            received_at: Some(received),
            ..AttemptRecord::default()
        },
    }
}

pub async fn a_batch_of_finishes_is_fenced_row_by_row<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let billing = destination(h, "billing", Region::EU).await;
    let delivered = task(h, "r1", &crm, Region::EU).await;
    let limited = task(h, "r2", &crm, Region::EU).await;
    let stale = task(h, "r3", &billing, Region::EU).await;
    let failed = task(h, "r4", &billing, Region::EU).await;
    h.clock().advance(Duration::hours(1));
    let claimed = s.claim_due(&claim(Region::EU, "c", 10)).await.unwrap();
    assert_eq!(claimed.len(), 4);
    let lease_of = |id: TaskId| {
        claimed
            .iter()
            .find(|c| c.task.id == id)
            .map(|c| c.lease())
            .unwrap()
    };
    let mut old = lease_of(stale);
    old.token -= 1_000;

    let in_a_minute = t0() + Duration::minutes(1);
    let batch = vec![
        Finish {
            lease: lease_of(delivered),
            destination: crm.clone(),
            decision: decision(Transition::Deliver, 200, None),
        },
        Finish {
            lease: lease_of(limited),
            destination: crm.clone(),
            decision: decision(
                Transition::RetryWait {
                    available_at: in_a_minute,
                },
                429,
                Some(Duration::minutes(1)),
            ),
        },
        Finish {
            lease: old,
            destination: billing.clone(),
            decision: decision(Transition::Deliver, 200, None),
        },
        Finish {
            lease: lease_of(failed),
            destination: billing.clone(),
            decision: decision(Transition::Fail(FailureReason::Status(400)), 400, None),
        },
    ];
    let outcomes = s.finish_many(&batch).await.unwrap().outcomes;
    use TransitionOutcome::{Applied, Fenced};
    assert_eq!(outcomes, vec![Applied, Applied, Fenced, Applied]);

    let state = |id| async move { s.task(id).await.unwrap().unwrap() };
    assert_eq!(state(delivered).await.state, TaskState::Delivered);
    let retried = state(limited).await;
    assert_eq!(retried.state, TaskState::RetryWait);
    assert_eq!(
        retried.available_at,
        t0() + Duration::hours(1) + Duration::minutes(1),
        "the delay counts from the store's now"
    );
    assert_eq!(state(stale).await.state, TaskState::Leased, "fenced");
    assert_eq!(state(failed).await.state, TaskState::Failed);

    let paused = s.destination(&crm).await.unwrap().unwrap();
    assert_eq!(
        paused.paused_until,
        Some(t0() + Duration::hours(1) + Duration::minutes(1))
    );
    let billing_row = s.destination(&billing).await.unwrap().unwrap();
    assert_eq!(billing_row.paused_until, None);

    let outcomes_logged = |id| async move {
        s.attempts(id)
            .await
            .unwrap()
            .iter()
            .map(|a| a.outcome)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        outcomes_logged(delivered).await,
        vec![AttemptOutcome::Delivered]
    );
    assert_eq!(
        outcomes_logged(limited).await,
        vec![AttemptOutcome::RetryWait]
    );
    assert_eq!(outcomes_logged(stale).await, vec![AttemptOutcome::Fenced]);
    assert_eq!(outcomes_logged(failed).await, vec![AttemptOutcome::Failed]);

    // The same batch again: its own finishes are repeats, nothing moves.
    let again = s.finish_many(&batch).await.unwrap().outcomes;
    assert_eq!(again, vec![Applied, Applied, Fenced, Applied]);
    assert_eq!(
        outcomes_logged(delivered).await,
        vec![AttemptOutcome::Delivered],
        "a repeat writes no second attempt row"
    );
    assert!(s.finish_many(&[]).await.unwrap().outcomes.is_empty());
}

/// A finish that asks to pause a destination that is not there still
/// applies, and so does the rest of its batch.
pub async fn a_pause_of_an_unknown_destination_does_not_stop_the_finish<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let id = task(h, "r1", &crm, Region::EU).await;
    let claimed = s.claim_due(&claim(Region::EU, "c", 10)).await.unwrap();
    let retry_at = t0() + Duration::seconds(30);
    let finish = Finish {
        lease: claimed[0].lease(),
        destination: DestinationId::new("gone").unwrap(),
        decision: decision(
            Transition::RetryWait {
                available_at: retry_at,
            },
            429,
            Some(Duration::seconds(30)),
        ),
    };
    assert_eq!(
        s.finish_many(&[finish]).await.unwrap().outcomes,
        vec![TransitionOutcome::Applied]
    );
    let row = s.task(id).await.unwrap().unwrap();
    assert_eq!(row.state, TaskState::RetryWait);
    assert_eq!(row.available_at, retry_at);
}

/// `finish`, one decision at a time, for each kind of decision: what it
/// moves the row to, what it logs, and the pause it writes with it.
pub async fn one_finish_applies_each_kind_of_decision<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let billing = destination(h, "billing", Region::EU).await;
    let ok = task(h, "ok", &crm, Region::EU).await;
    let later = task(h, "later", &billing, Region::EU).await;
    let gone = task(h, "gone", &crm, Region::EU).await;
    let claimed = s.claim_due(&claim(Region::EU, "c", 10)).await.unwrap();
    assert_eq!(claimed.len(), 3);
    let lease_of = |id: TaskId| {
        claimed
            .iter()
            .find(|c| c.task.id == id)
            .map(|c| c.lease())
            .unwrap()
    };
    let applied = TransitionOutcome::Applied;
    let deliver = decision(Transition::Deliver, 204, None);
    assert_eq!(
        s.finish(&lease_of(ok), &crm, &deliver).await.unwrap(),
        applied
    );
    let retry = decision(
        Transition::RetryWait {
            available_at: t0() + Duration::minutes(5),
        },
        429,
        Some(Duration::minutes(2)),
    );
    assert_eq!(
        s.finish(&lease_of(later), &billing, &retry).await.unwrap(),
        applied
    );
    let fail = decision(Transition::Fail(FailureReason::Status(410)), 410, None);
    assert_eq!(
        s.finish(&lease_of(gone), &crm, &fail).await.unwrap(),
        applied
    );

    let row = |id| async move { s.task(id).await.unwrap().unwrap() };
    let last = |id| async move { s.attempts(id).await.unwrap().pop().unwrap() };

    let delivered = row(ok).await;
    assert_eq!(delivered.state, TaskState::Delivered);
    assert_eq!(
        delivered.lease_owner, None,
        "the lease ends with the attempt"
    );
    let logged = last(ok).await;
    assert_eq!(
        (
            logged.outcome,
            logged.observed.http_status,
            logged.attempt_number
        ),
        (AttemptOutcome::Delivered, Some(204), 1)
    );
    assert_eq!(logged.next_available_at, None);

    let retried = row(later).await;
    assert_eq!(retried.state, TaskState::RetryWait);
    assert_eq!(retried.available_at, t0() + Duration::minutes(5));
    let logged = last(later).await;
    assert_eq!(
        (logged.outcome, logged.next_available_at),
        (AttemptOutcome::RetryWait, Some(t0() + Duration::minutes(5)))
    );
    assert_eq!(
        s.destination(&billing).await.unwrap().unwrap().paused_until,
        Some(t0() + Duration::minutes(2)),
        "the pause is written with the finish"
    );
    assert_eq!(
        s.destination(&crm).await.unwrap().unwrap().paused_until,
        None
    );

    let failed = row(gone).await;
    assert_eq!(failed.state, TaskState::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some("http_410"));
    assert_eq!(last(gone).await.outcome, AttemptOutcome::Failed);

    // The same finish again is a repeat; another lease's is fenced.
    assert_eq!(
        s.finish(&lease_of(ok), &crm, &deliver).await.unwrap(),
        applied
    );
    assert_eq!(s.attempts(ok).await.unwrap().len(), 1);
    let mut stale = lease_of(later);
    stale.token += 1_000;
    assert_eq!(
        s.finish(&stale, &billing, &deliver).await.unwrap(),
        TransitionOutcome::Fenced
    );
    assert_eq!(row(later).await.state, TaskState::RetryWait);
    let missing = remit::domain::Lease {
        task_id: TaskId::generate(),
        ..lease_of(ok)
    };
    assert_eq!(
        s.finish(&missing, &crm, &deliver).await.unwrap(),
        TransitionOutcome::NotFound
    );
}
