//! Each transition of a task's row, written once.
//!
//! Every rule of the state machine lives here as a function of the row and
//! the store's `now`: the states a transition leaves from, the lease-token
//! guard, what it writes, the attempt row it appends, and what a repeat or
//! a stale lease gets. The in-memory model applies them under its lock and
//! the SQLite store inside a `BEGIN IMMEDIATE` transaction, to the row it
//! has just read. PostgreSQL cannot afford a read before every write on its
//! hot path, so its statements take their targets from the same
//! [`EndAttempt`] and [`repeat_of`] and compute the rest in SQL; the
//! conformance suite holds them to these functions case by case.

use chrono::{DateTime, Duration, Utc};

use crate::domain::{
    idempotency_key, Attempt, AttemptOutcome, AttemptRecord, ClaimedTask, FailureReason, Lease,
    NewTask, Task, TaskId, TaskState,
};
use crate::policy::{Decision, Transition};
use crate::store::contract::TransitionOutcome;

/// The longest delay a store honours: PostgreSQL's statements clamp to it
/// so `now() + delay` cannot overflow, and the others clamp the same way.
pub(in crate::store) const LONGEST_DELAY_DAYS: i64 = 100 * 366;

/// `now + delay`, the delay clamped to between zero and a century.
pub(in crate::store) fn later(now: DateTime<Utc>, delay: Duration) -> DateTime<Utc> {
    let delay = delay.clamp(Duration::zero(), Duration::days(LONGEST_DELAY_DAYS));
    now.checked_add_signed(delay)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// A fresh `pending` row for a validated request.
pub(in crate::store) fn new_task(
    id: TaskId,
    payload_ref: uuid::Uuid,
    new: NewTask,
    now: DateTime<Utc>,
) -> Task {
    Task {
        id,
        idempotency_key: idempotency_key(&new.tenant_id, &new.reminder_id),
        tenant_id: new.tenant_id,
        reminder_id: new.reminder_id,
        destination_id: new.destination_id,
        region: new.region,
        state: TaskState::Pending,
        not_before: new.not_before,
        available_at: new.not_before,
        retry_horizon_at: new.not_before + new.retry_horizon,
        lease_token: None,
        lease_owner: None,
        lease_expires_at: None,
        attempt_count: 0,
        attempts_before_replay: 0,
        payload_ref,
        last_status: None,
        failure_reason: None,
        created_at: now,
        updated_at: now,
        delivered_at: None,
        finalized_at: None,
        ordering_key: new.ordering_key,
        traceparent: new.traceparent,
        cancelled: None,
        waiting_change: None,
        payload_erased_at: None,
    }
}

/// Since when a row can be claimed: a due `pending`/`retry_wait` row since
/// it became available, a `leased` row since its lease expired. Never
/// before `not_before`, whatever else the row says (a row written by an
/// import, or by hand, may carry a lease that ends before its deadline).
/// A row with a change waiting for its attempt is never claimable: the
/// change settles it (`changes::settle`).
pub(in crate::store) fn claimable_since(task: &Task, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    if task.not_before > now || task.waiting_change.is_some() {
        return None;
    }
    match task.state {
        TaskState::Pending | TaskState::RetryWait if task.available_at <= now => {
            Some(task.available_at)
        }
        TaskState::Leased => task.lease_expires_at.filter(|at| *at <= now),
        _ => None,
    }
}

/// From when a live row can be claimed, whatever the time is now: the
/// later of its deadline and the moment it is available (unleased) or its
/// lease runs out (leased). `None` for a row that has ended, or that
/// waits for a change to settle.
pub(in crate::store) fn claimable_from(task: &Task) -> Option<DateTime<Utc>> {
    if task.waiting_change.is_some() {
        return None;
    }
    let from = match task.state {
        TaskState::Pending | TaskState::RetryWait => task.available_at,
        TaskState::Leased => task.lease_expires_at?,
        _ => return None,
    };
    Some(from.max(task.not_before))
}

/// The guard of every transition out of `leased`.
pub(in crate::store) fn lease_is_current(task: &Task, lease: &Lease) -> bool {
    task.state == TaskState::Leased && task.lease_token == Some(lease.token)
}

/// The lease a row carries now, as its lease owner would present it.
pub(in crate::store) fn current_lease(task: &Task) -> Lease {
    Lease {
        task_id: task.id,
        token: task.lease_token.unwrap_or_default(),
        owner: task.lease_owner.clone().unwrap_or_default(),
        attempt: task.attempt_count,
    }
}

/// The attempt row for `lease`.
/// The attempt row of a lease that ran out before its owner finished it:
/// logged as `abandoned`, with nothing known of the request.
pub(in crate::store) fn abandoned(lease: &Lease, now: DateTime<Utc>) -> Attempt {
    attempt(
        lease,
        AttemptOutcome::Abandoned,
        &AttemptRecord::default(),
        None,
        now,
        lease.attempt,
    )
}

pub(in crate::store) fn attempt(
    lease: &Lease,
    outcome: AttemptOutcome,
    record: &AttemptRecord,
    next: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    number: i32,
) -> Attempt {
    Attempt {
        task_id: lease.task_id,
        attempt_number: number,
        lease_token: lease.token,
        lease_owner: lease.owner.clone(),
        outcome,
        observed: record.clone(),
        next_available_at: next,
        recorded_at: now,
    }
}

/// Leases a claimable row to `lease_owner` with `token` until `now + lease`.
/// Taking over an expired lease logs the lost attempt as `abandoned`, under
/// the old lease's token, so its holder's late report is fenced.
pub(in crate::store) fn lease(
    task: &mut Task,
    token: i64,
    lease_owner: &str,
    lease: Duration,
    now: DateTime<Utc>,
) -> (ClaimedTask, Option<Attempt>) {
    let reclaimed = task.state == TaskState::Leased;
    let lost = reclaimed.then(|| abandoned(&current_lease(task), now));
    let expires = later(now, lease.max(Duration::milliseconds(1)));
    task.state = TaskState::Leased;
    task.lease_token = Some(token);
    task.lease_owner = Some(lease_owner.to_owned());
    task.lease_expires_at = Some(expires);
    task.attempt_count += 1;
    task.updated_at = now;
    let claimed = ClaimedTask {
        task: task.clone(),
        lease_token: token,
        lease_expires_at: expires,
        reclaimed,
        payload: None,
    };
    (claimed, lost)
}

/// One attempt's end: the state it moves the row to, the outcome it logs,
/// when the row is due again and why it failed.
#[derive(Debug, Clone)]
pub(in crate::store) struct EndAttempt<'a> {
    pub target: (TaskState, AttemptOutcome),
    /// Due again this long after the store's now; without it the row keeps
    /// the `available_at` it was claimed at.
    pub delay: Option<Duration>,
    pub failure_reason: Option<String>,
    pub record: &'a AttemptRecord,
}

impl<'a> EndAttempt<'a> {
    /// The end a policy decision asks for, with a retry due after the
    /// decision's delay by the store's clock.
    pub fn of(decision: &'a Decision) -> Self {
        let (target, failure_reason) = match &decision.transition {
            Transition::Deliver => ((TaskState::Delivered, AttemptOutcome::Delivered), None),
            Transition::RetryWait { .. } => {
                ((TaskState::RetryWait, AttemptOutcome::RetryWait), None)
            }
            Transition::Fail(reason) => (
                (TaskState::Failed, AttemptOutcome::Failed),
                Some(reason.code()),
            ),
        };
        Self {
            target,
            delay: decision.retry_delay(),
            failure_reason,
            record: &decision.record,
        }
    }

    pub fn failed(reason: &FailureReason, record: &'a AttemptRecord) -> Self {
        Self {
            failure_reason: Some(reason.code()),
            ..Self::to((TaskState::Failed, AttemptOutcome::Failed), record)
        }
    }

    /// The outcome is unknown (the request may have gone out): it counts,
    /// and the row keeps the `available_at` it was claimed at, which has
    /// passed, so it is due again at once.
    pub fn abandoned(record: &'a AttemptRecord) -> Self {
        Self::to((TaskState::RetryWait, AttemptOutcome::Abandoned), record)
    }

    fn to(target: (TaskState, AttemptOutcome), record: &'a AttemptRecord) -> Self {
        Self {
            target,
            delay: None,
            failure_reason: None,
            record,
        }
    }

    /// When the row asked to be due again, on the store's clock.
    fn asked_at(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.delay.map(|d| later(now, d))
    }
}

/// Ends the attempt on a row `lease` holds ([`holds`]): moves it to the
/// target state, never due before its deadline, and returns the attempt
/// row to append.
pub(in crate::store) fn end_attempt(
    task: &mut Task,
    lease: &Lease,
    end: &EndAttempt<'_>,
    now: DateTime<Utc>,
) -> Attempt {
    let (target, outcome) = end.target;
    let asked = end.asked_at(now);
    task.state = target;
    task.lease_token = None;
    task.lease_owner = None;
    task.lease_expires_at = None;
    task.available_at = asked.unwrap_or(task.available_at).max(task.not_before);
    task.failure_reason = end.failure_reason.clone();
    task.last_status = end.record.http_status;
    task.delivered_at = (target == TaskState::Delivered).then_some(now);
    task.finalized_at = target.is_terminal().then_some(now);
    task.updated_at = now;
    let next = asked.map(|_| task.available_at);
    attempt(lease, outcome, end.record, next, now, task.attempt_count)
}

/// Which logged outcome for the same lease makes a refused finish a
/// harmless repeat. An `abandoned` row for the token is also what a reclaim
/// writes, so it proves nothing about the caller: an abandon is never a
/// repeat. A hand-back or an extension logs nothing, so none is either.
pub(in crate::store) fn repeat_of(outcome: Option<AttemptOutcome>) -> Option<AttemptOutcome> {
    outcome.filter(|o| *o != AttemptOutcome::Abandoned)
}

/// What a guarded transition that found no row it holds answers: the task
/// is gone, this lease already did the same (a repeat), or it is fenced.
pub(in crate::store) fn refusal(found: bool, repeated: bool) -> TransitionOutcome {
    match (found, repeated) {
        (false, _) => TransitionOutcome::NotFound,
        (true, true) => TransitionOutcome::Applied,
        (true, false) => TransitionOutcome::Fenced,
    }
}

/// A report from a lease owner that lost its lease still tells what the
/// receiver saw: it is logged as `fenced` and changes nothing else.
pub(in crate::store) fn fenced_attempt(
    lease: &Lease,
    record: &AttemptRecord,
    now: DateTime<Utc>,
) -> Attempt {
    attempt(
        lease,
        AttemptOutcome::Fenced,
        record,
        None,
        now,
        lease.attempt.max(1),
    )
}

/// Hands a held lease back without counting an attempt. The row is due
/// again about `after` from now and never before its destination's pause
/// ends.
///
/// A task attempted since it was scheduled (or last replayed) has a retry
/// horizon to keep: its delay is clamped to the horizon, and when nothing
/// can happen before the horizon (now, or the pause's end, is at or past
/// it) it fails with `retry_horizon` instead, so a task that keeps being
/// handed back ends rather than looping forever. A task not yet attempted
/// never ends here: whatever made remit hand it back (a full queue, the
/// in-flight cap, a pause, a refused address, a shutdown) is remit's side,
/// and a reminder due long ago still gets its first attempt. Its delay is
/// not clamped, so it comes back when `after` says and not at once.
pub(in crate::store) fn hand_back(
    task: &mut Task,
    after: Option<Duration>,
    paused_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> TransitionOutcome {
    let horizon = task.retry_horizon_at;
    // The hand-back takes back the attempt the claim counted.
    let tried = task.attempt_count - 1 > task.attempts_before_replay;
    let expired = tried && paused_until.map_or(now, |p| p.max(now)) >= horizon;
    task.state = if expired {
        TaskState::Failed
    } else if tried {
        TaskState::RetryWait
    } else {
        TaskState::Pending
    };
    task.attempt_count -= 1;
    task.lease_token = None;
    task.lease_owner = None;
    task.lease_expires_at = None;
    let again = after.map(|d| {
        let at = later(now, d);
        if tried {
            at.min(horizon)
        } else {
            at
        }
    });
    task.available_at = [again, paused_until]
        .into_iter()
        .flatten()
        .fold(task.available_at, DateTime::max);
    task.failure_reason = expired.then(|| FailureReason::RetryHorizon.code());
    task.finalized_at = expired.then_some(now);
    task.updated_at = now;
    if expired {
        TransitionOutcome::PastHorizon
    } else {
        TransitionOutcome::Applied
    }
}

/// Pushes a held lease's expiry to `by` from now, never earlier than it is.
pub(in crate::store) fn extend(task: &mut Task, by: Duration, now: DateTime<Utc>) {
    task.lease_expires_at = task.lease_expires_at.map(|at| at.max(later(now, by)));
    task.updated_at = now;
}

/// Sends a `failed` row round again from now (never before its deadline)
/// with a fresh horizon. Attempt numbers keep rising; the retry budget
/// counts only the attempts since. False when the row is not `failed`
/// (replaying anything else would resend a delivered webhook or race a
/// live lease), or when its payload was erased.
pub(in crate::store) fn replay(
    task: &mut Task,
    horizon: Duration,
    destination_deleted: bool,
    now: DateTime<Utc>,
) -> bool {
    // An erased payload is gone: there is nothing to send again; nor is a
    // deleted destination there to send to.
    if task.state != TaskState::Failed || task.payload_erased_at.is_some() || destination_deleted {
        return false;
    }
    let from = now.max(task.not_before);
    task.state = TaskState::Pending;
    task.available_at = from;
    task.retry_horizon_at = later(from, horizon);
    task.attempts_before_replay = task.attempt_count;
    task.failure_reason = None;
    task.finalized_at = None;
    task.updated_at = now;
    true
}

/// A destination's pause after asking for `pause` more: an existing later
/// pause wins.
pub(in crate::store) fn pause(
    current: Option<DateTime<Utc>>,
    pause: Duration,
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    let until = later(now, pause);
    current.map_or(until, |p| p.max(until))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_tell_gone_repeat_and_fenced_apart() {
        assert_eq!(refusal(false, true), TransitionOutcome::NotFound);
        assert_eq!(refusal(true, true), TransitionOutcome::Applied);
        assert_eq!(refusal(true, false), TransitionOutcome::Fenced);
        assert_eq!(repeat_of(Some(AttemptOutcome::Abandoned)), None);
        assert_eq!(
            repeat_of(Some(AttemptOutcome::Delivered)),
            Some(AttemptOutcome::Delivered)
        );
    }
}
