//! An operator's changes to a task, written once: cancel, reschedule,
//! erase, retry now, and the settling of a change that waited for the
//! attempt in flight. The model and SQLite apply these to the row they
//! read, and so does PostgreSQL (`postgres/changes.rs`) to the row it
//! locked; the conformance suite holds all three to one behaviour.
//!
//! A leased row is in flight whether or not its lease has run out: its
//! holder may still be sending. So a change to it never touches the lease;
//! it waits ([`WaitingChange`]), the claim passes the row by, and
//! [`settle`] applies it once the attempt has ended (or, when the lease ran
//! out, logs the lost attempt `abandoned` and applies it).
//!
//! Bringing back a task that has ended (`failed` or `cancelled`) with a
//! fresh attempt budget is a replay by another name, so a move does it only
//! for a caller who may replay (`revive`), and never for a task of a
//! deleted destination. A move that waited for an attempt never does: it
//! lapses when the attempt ends the task, whoever asked for it.

use chrono::{DateTime, Utc};

use super::lifecycle::{abandoned, current_lease, later};
use crate::domain::{Attempt, Cancellation, Task, TaskState, WaitingChange};

/// What [`cancel`] did to the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum CancelStep {
    /// Ended `cancelled` now.
    Now,
    /// Leased: the cancel waits for the attempt.
    AfterAttempt,
    /// Already cancelled: nothing written.
    Repeat,
    /// Delivered, or failed with no move waiting: nothing written.
    Ended,
}

/// Whether the row has ended: delivered, failed or cancelled (a move that
/// waited for the attempt that ended it lapses).
fn ended(task: &Task) -> bool {
    task.state.is_terminal()
}

/// Cancels the row: see [`crate::store::Changes::cancel`].
pub(in crate::store) fn cancel(task: &mut Task, by: &str, now: DateTime<Utc>) -> CancelStep {
    match task.state {
        TaskState::Cancelled => CancelStep::Repeat,
        _ if ended(task) => CancelStep::Ended,
        TaskState::Leased => {
            task.cancelled = Some(Cancellation {
                at: now,
                by: by.to_owned(),
            });
            task.waiting_change = Some(WaitingChange::Cancel);
            task.updated_at = now;
            CancelStep::AfterAttempt
        }
        // Waiting (`pending`, `retry_wait`).
        _ => {
            task.cancelled = Some(Cancellation {
                at: now,
                by: by.to_owned(),
            });
            end_cancelled(task, now);
            CancelStep::Now
        }
    }
}

fn end_cancelled(task: &mut Task, now: DateTime<Utc>) {
    task.state = TaskState::Cancelled;
    task.waiting_change = None;
    // A failed row whose cancel waited ends cancelled, not failed.
    task.failure_reason = None;
    task.finalized_at = Some(now);
    task.updated_at = now;
}

/// What [`reschedule`] did to the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum MoveStep {
    Now,
    AfterAttempt,
    /// Not moved: delivered, erased without a new payload, a cancel waits,
    /// a new payload asked while an attempt is in flight (the attempt may
    /// deliver the old one), or an attempted task of an ordering line
    /// (tried rows go first in their line whatever their deadline, so a
    /// move would hold the line back until it, or let it pass one in
    /// flight).
    Refused,
    /// Not moved: it has ended (failed or cancelled), and the caller may
    /// not bring it back.
    Ended,
    /// Not moved: its destination was deleted.
    DestinationDeleted,
}

/// The answer of a reschedule that left the row as it was, if it did.
pub(in crate::store) fn not_moved(
    step: MoveStep,
    task: &Task,
) -> Option<crate::store::contract::Move> {
    use crate::store::contract::Move;
    match step {
        MoveStep::Refused => Some(Move::Refused(task.clone())),
        MoveStep::Ended => Some(Move::Ended(task.clone())),
        MoveStep::DestinationDeleted => Some(Move::DestinationDeleted(task.clone())),
        MoveStep::Now | MoveStep::AfterAttempt => None,
    }
}

/// Whether a reschedule leaves the row as it is ([`MoveStep::Refused`]).
pub(in crate::store) fn refuses_move(task: &Task, new_payload: bool) -> bool {
    let erased = task.payload_erased_at.is_some() && !new_payload;
    task.state == TaskState::Delivered
        || erased
        || task.waiting_change == Some(WaitingChange::Cancel)
        || (new_payload && task.state == TaskState::Leased)
        || (task.ordering_key.is_some() && task.attempt_count > 0)
}

/// What a reschedule asks of a row, beside the new deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::store) struct MoveAsked {
    /// It brings a payload (the store writes it).
    pub new_payload: bool,
    /// Its caller may bring an ended task back (the scope replay takes).
    pub revive: bool,
    /// The task's destination was deleted.
    pub destination_deleted: bool,
}

/// Moves the row's deadline to `to`: see
/// [`crate::store::Changes::reschedule`].
pub(in crate::store) fn reschedule(
    task: &mut Task,
    to: DateTime<Utc>,
    asked: MoveAsked,
    now: DateTime<Utc>,
) -> MoveStep {
    let new_payload = asked.new_payload;
    if refuses_move(task, new_payload) {
        return MoveStep::Refused;
    }
    if asked.destination_deleted {
        return MoveStep::DestinationDeleted;
    }
    if ended(task) && !asked.revive {
        return MoveStep::Ended;
    }
    if new_payload {
        task.payload_erased_at = None;
    }
    if task.state == TaskState::Leased {
        task.waiting_change = Some(WaitingChange::Move(to));
        task.updated_at = now;
        return MoveStep::AfterAttempt;
    }
    move_to(task, to, now);
    MoveStep::Now
}

/// The move itself, on a row not in flight: the deadline and the horizon
/// (kept as long as it was), due at the new deadline; an ended row comes
/// back `pending` with a fresh attempt budget, as a replay does.
fn move_to(task: &mut Task, to: DateTime<Utc>, now: DateTime<Utc>) {
    let horizon = task.retry_horizon_at - task.not_before;
    if task.state.is_terminal() {
        task.state = TaskState::Pending;
        task.attempts_before_replay = task.attempt_count;
        task.failure_reason = None;
        task.finalized_at = None;
        task.cancelled = None;
    }
    task.not_before = to;
    task.available_at = to;
    task.retry_horizon_at = later(to, horizon);
    task.waiting_change = None;
    task.updated_at = now;
}

/// Marks the row's payload erased (the store drops the bytes) and cancels
/// it if it has not ended. True when the payload was there until now.
pub(in crate::store) fn erase(task: &mut Task, by: &str, now: DateTime<Utc>) -> bool {
    let was_there = task.payload_erased_at.is_none();
    if was_there {
        task.payload_erased_at = Some(now);
        task.updated_at = now;
    }
    cancel(task, by, now);
    was_there
}

/// Whether erasing the row cancels it (it has not ended).
pub(in crate::store) fn erase_cancels(task: &Task) -> bool {
    !ended(task)
}

/// Makes a row waiting for a retry due now. True when it moved.
pub(in crate::store) fn retry_now(task: &mut Task, now: DateTime<Utc>) -> bool {
    if task.state != TaskState::RetryWait || task.available_at <= now {
        return false;
    }
    task.available_at = now.max(task.not_before);
    task.updated_at = now;
    true
}

/// Whether a waiting change can be settled now: the row has one, and no
/// attempt holds a live lease on it.
pub(in crate::store) fn settles(task: &Task, now: DateTime<Utc>) -> bool {
    task.waiting_change.is_some()
        && (task.state != TaskState::Leased || task.lease_expires_at.is_some_and(|at| at <= now))
}

/// Applies the row's waiting change ([`settles`] must hold): after a
/// delivery it lapses; a cancel ends the row `cancelled` (a failed one
/// too, so nothing, a replay included, sends it again); a move moves a row
/// the attempt did not end, and lapses on one it failed (bringing that
/// back is a replay's). A lease that ran out is ended first, its attempt
/// logged `abandoned`, which the answer carries.
pub(in crate::store) fn settle(task: &mut Task, now: DateTime<Utc>) -> Option<Attempt> {
    let change = task.waiting_change.take()?;
    task.updated_at = now;
    let lost = (task.state == TaskState::Leased).then(|| {
        let lost = abandoned(&current_lease(task), now);
        task.state = TaskState::RetryWait;
        task.lease_token = None;
        task.lease_owner = None;
        task.lease_expires_at = None;
        lost
    });
    match (change, task.state) {
        (_, TaskState::Delivered | TaskState::Cancelled) => {}
        (WaitingChange::Move(_), TaskState::Failed) => {}
        (WaitingChange::Cancel, _) => end_cancelled(task, now),
        (WaitingChange::Move(to), _) => move_to(task, to, now),
    }
    lost
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::domain::AttemptOutcome;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 9, 1, 8, 0, 0).unwrap()
    }

    fn task(state: TaskState) -> Task {
        let mut task = Task::leased_for_tests(now(), Duration::seconds(30), Duration::hours(1), 1);
        if state != TaskState::Leased {
            task.lease_token = None;
            task.lease_owner = None;
            task.lease_expires_at = None;
        }
        task.state = state;
        if state.is_terminal() {
            task.finalized_at = Some(now());
        }
        task
    }

    #[test]
    fn a_waiting_task_ends_cancelled_at_once_with_who_asked() {
        for state in [TaskState::Pending, TaskState::RetryWait] {
            let mut t = task(state);
            assert_eq!(cancel(&mut t, "tok_1", now()), CancelStep::Now);
            assert_eq!(t.state, TaskState::Cancelled);
            assert_eq!(t.finalized_at, Some(now()));
            assert_eq!(t.cancelled.as_ref().map(|c| c.by.as_str()), Some("tok_1"));
        }
    }

    #[test]
    fn a_task_in_flight_keeps_its_lease_and_waits() {
        let mut t = task(TaskState::Leased);
        assert_eq!(cancel(&mut t, "cli", now()), CancelStep::AfterAttempt);
        assert_eq!(t.state, TaskState::Leased);
        assert_eq!(t.lease_token, Some(1));
        assert_eq!(t.waiting_change, Some(WaitingChange::Cancel));
        // Not settled while the lease is live.
        assert!(!settles(&t, now()));
    }

    #[test]
    fn ended_tasks_are_left_alone_and_a_repeat_is_a_repeat() {
        let mut delivered = task(TaskState::Delivered);
        assert_eq!(cancel(&mut delivered, "cli", now()), CancelStep::Ended);
        assert_eq!(delivered.cancelled, None);
        let mut cancelled = task(TaskState::Cancelled);
        assert_eq!(cancel(&mut cancelled, "cli", now()), CancelStep::Repeat);
    }

    const MOVE: MoveAsked = MoveAsked {
        new_payload: false,
        revive: false,
        destination_deleted: false,
    };
    const REVIVE: MoveAsked = MoveAsked {
        revive: true,
        ..MOVE
    };
    const WITH_PAYLOAD: MoveAsked = MoveAsked {
        new_payload: true,
        ..MOVE
    };

    #[test]
    fn a_move_keeps_the_horizon_length_and_revives_an_ended_task_for_who_may() {
        let to = now() + Duration::days(30);
        let mut t = task(TaskState::Pending);
        assert_eq!(reschedule(&mut t, to, MOVE, now()), MoveStep::Now);
        assert_eq!((t.not_before, t.available_at), (to, to));
        assert_eq!(t.retry_horizon_at, to + Duration::hours(1));

        for state in [TaskState::Failed, TaskState::Cancelled] {
            let mut t = task(state);
            t.attempt_count = 3;
            let was = t.clone();
            assert_eq!(reschedule(&mut t, to, MOVE, now()), MoveStep::Ended);
            assert_eq!(t, was, "left as it was");
            assert_eq!(reschedule(&mut t, to, REVIVE, now()), MoveStep::Now);
            assert_eq!(t.state, TaskState::Pending);
            assert_eq!(t.finalized_at, None);
            assert_eq!(t.attempts_since_replay(), 0);
        }

        let mut t = task(TaskState::Delivered);
        assert_eq!(reschedule(&mut t, to, REVIVE, now()), MoveStep::Refused);
    }

    #[test]
    fn a_task_of_a_deleted_destination_is_never_moved() {
        let to = now() + Duration::days(1);
        let gone = MoveAsked {
            destination_deleted: true,
            ..REVIVE
        };
        for state in [TaskState::Pending, TaskState::Failed, TaskState::Cancelled] {
            let mut t = task(state);
            let was = t.clone();
            assert_eq!(
                reschedule(&mut t, to, gone, now()),
                MoveStep::DestinationDeleted
            );
            assert_eq!(t, was);
        }
    }

    #[test]
    fn an_erased_task_moves_only_with_a_new_payload() {
        let to = now() + Duration::days(1);
        let mut t = task(TaskState::Pending);
        assert!(erase(&mut t, "cli", now()));
        assert_eq!(t.state, TaskState::Cancelled);
        assert_eq!(reschedule(&mut t, to, REVIVE, now()), MoveStep::Refused);
        let brought = MoveAsked {
            revive: true,
            ..WITH_PAYLOAD
        };
        assert_eq!(reschedule(&mut t, to, brought, now()), MoveStep::Now);
        assert_eq!(t.payload_erased_at, None);
        assert_eq!(t.state, TaskState::Pending);
    }

    #[test]
    fn a_change_after_an_expired_lease_logs_the_lost_attempt() {
        let mut t = task(TaskState::Leased);
        reschedule(&mut t, now() + Duration::days(2), MOVE, now());
        let later = now() + Duration::minutes(1);
        assert!(settles(&t, later));
        let lost = settle(&mut t, later).expect("the lost attempt");
        assert_eq!(lost.outcome, AttemptOutcome::Abandoned);
        assert_eq!(t.state, TaskState::RetryWait);
        assert_eq!(t.lease_token, None);
        assert_eq!(t.not_before, now() + Duration::days(2));
        assert_eq!(t.waiting_change, None);
    }

    #[test]
    fn a_delivery_makes_a_waiting_change_lapse_and_a_retry_does_not() {
        let mut t = task(TaskState::Delivered);
        t.waiting_change = Some(WaitingChange::Cancel);
        assert_eq!(settle(&mut t, now()), None);
        assert_eq!(t.state, TaskState::Delivered);
        assert_eq!(t.waiting_change, None);

        let mut t = task(TaskState::RetryWait);
        t.waiting_change = Some(WaitingChange::Cancel);
        settle(&mut t, now());
        assert_eq!(t.state, TaskState::Cancelled);
    }

    #[test]
    fn a_move_that_waited_lapses_when_the_attempt_fails_the_task() {
        // Moved while in flight (by any caller), then the attempt failed
        // the task: the move does not bring it back, which is a replay's.
        let mut t = task(TaskState::Leased);
        reschedule(&mut t, now() + Duration::days(1), REVIVE, now());
        t.state = TaskState::Failed;
        t.lease_token = None;
        t.lease_owner = None;
        t.lease_expires_at = None;
        t.failure_reason = Some("http_404".into());
        t.finalized_at = Some(now());
        assert!(settles(&t, now()));
        assert_eq!(settle(&mut t, now()), None);
        assert_eq!(t.state, TaskState::Failed);
        assert_eq!(t.waiting_change, None);
        assert_eq!(t.not_before, now(), "not moved");

        // A failed task is ended: neither cancelled nor erased into
        // `cancelled`.
        let mut t = task(TaskState::Failed);
        assert!(!erase_cancels(&t));
        assert_eq!(cancel(&mut t, "cli", now()), CancelStep::Ended);
        assert_eq!(t.state, TaskState::Failed);
    }

    #[test]
    fn retry_now_moves_only_tasks_waiting_for_a_retry() {
        let mut t = task(TaskState::RetryWait);
        t.available_at = now() + Duration::minutes(40);
        assert!(retry_now(&mut t, now()));
        assert_eq!(t.available_at, now());
        assert!(!retry_now(&mut t, now()));
        let mut pending = task(TaskState::Pending);
        pending.available_at = now() + Duration::minutes(40);
        assert!(!retry_now(&mut pending, now()));
    }
}
