//! The operator's changes, at random moments: cancel a task, reschedule it
//! (earlier or later than now, now and then with a new payload), erase its
//! payload, bring a destination's retries forward, and settle the changes
//! that waited for an attempt, as each process's periodic step does. Each
//! answer is checked against the row as it was just before, and the
//! world's expectations of the task follow it; what they promise for later
//! (no claim of a cancelled task, no send before the moved deadline, no
//! send of an erased payload) is checked at every claim and send, and the
//! settling of a waiting change after every step (`invariants.rs`).

use chrono::Duration;
use rand::Rng;
use remit::domain::{
    AttemptOutcome, Payload, Region, Task, TaskId, TaskState, TenantId, WaitingChange,
};
use remit::store::{Cancel, Changes, Erase, Move, Reschedule, Schedule, StoreError};

use super::{SimStore, World};

/// Who the operator's changes are by.
const BY: &str = "sim-operator";

impl<S: SimStore> World<S> {
    /// A task to change: often one a consumer holds, so that changes meet
    /// attempts in flight; now and then one whose earlier change still
    /// waits (the operator thinks again); otherwise any task scheduled.
    fn pick_task(&mut self) -> Option<TaskId> {
        match self.rng.random_range(0..10) {
            0..4 => {
                if let Some((c, i)) = self.pick_in_flight() {
                    return Some(self.consumers[c].in_flight[i].claimed.task.id);
                }
            }
            4..6 => {
                let waiting: Vec<TaskId> = self
                    .order
                    .iter()
                    .filter(|id| self.scheduled[id].waiting.is_some())
                    .copied()
                    .collect();
                if !waiting.is_empty() {
                    return Some(waiting[self.rng.random_range(0..waiting.len())]);
                }
            }
            _ => {}
        }
        match self.order.len() {
            0 => None,
            n => Some(self.order[self.rng.random_range(0..n)]),
        }
    }

    async fn row(&self, id: TaskId) -> Task {
        self.store.task(id).await.unwrap().unwrap()
    }

    /// Cancels a task: one waiting ends `cancelled` now, one in flight
    /// once its attempt ends, an ended one is left as it is.
    pub(super) async fn cancel(&mut self) {
        let Some(id) = self.pick_task() else {
            return;
        };
        let before = self.rows[&id].clone();
        let answer = self.store.cancel(id, BY).await.unwrap();
        let after = self.row(id).await;
        let by_us = |t: &Task| t.cancelled.as_ref().is_some_and(|c| c.by == BY);
        match (&answer, before.state) {
            (Cancel::Cancelled(t), TaskState::Pending | TaskState::RetryWait) => {
                check!(
                    self,
                    t.state == TaskState::Cancelled
                        && t.waiting_change.is_none()
                        && t.finalized_at.is_some()
                        && by_us(t)
                        && *t == after,
                    "the cancel of {id} ({:?}) left {t:?}, the row reads {after:?}",
                    before.state
                );
                self.totals.changes.cancelled += 1;
            }
            (Cancel::AfterAttempt(t), TaskState::Leased) => {
                check!(
                    self,
                    t.state == TaskState::Leased
                        && t.lease_token == before.lease_token
                        && t.lease_expires_at == before.lease_expires_at
                        && t.waiting_change == Some(WaitingChange::Cancel)
                        && by_us(t)
                        && *t == after,
                    "the cancel of {id} in flight left {t:?}, the row reads {after:?}"
                );
                self.totals.changes.cancelled_after_attempt += 1;
            }
            (Cancel::AlreadyCancelled(t), TaskState::Cancelled)
            | (Cancel::Ended(t), TaskState::Delivered | TaskState::Failed) => {
                check!(
                    self,
                    *t == before && after == before,
                    "a cancel of {id}, {:?} already, wrote to it",
                    before.state
                );
                check!(
                    self,
                    before.state != TaskState::Cancelled || self.scheduled[&id].stopped,
                    "{id} answered already cancelled, though no cancel or erase of it stands"
                );
            }
            (answer, state) => {
                check!(
                    self,
                    false,
                    "the cancel of {id} ({state:?}) answered {answer:?}"
                );
            }
        }
        let expected = self.scheduled.get_mut(&id).unwrap();
        // Whatever it answered, the operator means it never to go again.
        expected.stopped = true;
        match answer {
            Cancel::Cancelled(_) => expected.waiting = None,
            Cancel::AfterAttempt(_) => expected.waiting = Some(WaitingChange::Cancel),
            _ => {}
        }
    }

    /// Moves a task's deadline to up to half a minute before now or a
    /// minute after it, now and then with a new payload.
    pub(super) async fn reschedule(&mut self) {
        let Some(id) = self.pick_task() else {
            return;
        };
        let to = self.now() + Duration::milliseconds(self.rng.random_range(-30_000..60_000));
        let body = self
            .rng
            .random_bool(0.3)
            .then(|| format!("{{\"moved\":{}}}", self.step).into_bytes());
        // Half the callers may bring an ended task back (an admin's).
        let revive = self.rng.random_bool(0.5);
        let change = Reschedule {
            not_before: to,
            payload: body.clone().map(Payload::json),
            by: BY.into(),
            revive,
        };
        let before = self.rows[&id].clone();
        let answer = self.store.reschedule(id, &change).await.unwrap();
        let after = self.row(id).await;
        let refused = before.state == TaskState::Delivered
            || (before.payload_erased_at.is_some() && body.is_none())
            || before.waiting_change == Some(WaitingChange::Cancel)
            || (body.is_some() && before.state == TaskState::Leased)
            || (before.ordering_key.is_some() && before.attempt_count > 0);
        let ended = !refused && before.state.is_terminal() && !revive;
        match &answer {
            Move::Ended(t) => check!(
                self,
                ended && *t == before && after == before,
                "the reschedule of {id} ({:?}, revive {revive}) answered ended and left {after:?}",
                before.state
            ),
            Move::DestinationDeleted(_) => check!(
                self,
                false,
                "the reschedule of {id} found its destination deleted"
            ),
            Move::Refused(t) => check!(
                self,
                refused && *t == before && after == before,
                "the reschedule of {id} ({:?}, waiting {:?}, erased {}) was refused and left {after:?}",
                before.state,
                before.waiting_change,
                before.payload_erased_at.is_some()
            ),
            Move::AfterAttempt(t) => check!(
                self,
                !refused
                    && !ended
                    && before.state == TaskState::Leased
                    && t.lease_token == before.lease_token
                    && t.waiting_change == Some(WaitingChange::Move(to))
                    && t.not_before == before.not_before
                    && *t == after,
                "the reschedule of {id} ({:?}) waits for an attempt and left {after:?}",
                before.state
            ),
            Move::Moved(t) => {
                let horizon = (before.retry_horizon_at - before.not_before).max(Duration::zero());
                let revived = before.state.is_terminal();
                let state = if revived {
                    TaskState::Pending
                } else {
                    before.state
                };
                check!(
                    self,
                    !refused
                        && !ended
                        && before.state != TaskState::Leased
                        && t.state == state
                        && (t.not_before, t.available_at) == (to, to)
                        && t.retry_horizon_at == to + horizon
                        && t.waiting_change.is_none()
                        && t.attempt_count == before.attempt_count
                        && (!revived
                            || (t.attempts_since_replay() == 0
                                && t.finalized_at.is_none()
                                && t.cancelled.is_none()))
                        && *t == after,
                    "the reschedule of {id} ({:?}) to {to} left {after:?}",
                    before.state
                );
            }
            Move::NotFound => check!(self, false, "the reschedule of {id} found no task"),
        }
        // Promise 3: the same reminder keeps its key.
        check!(
            self,
            after.idempotency_key == self.scheduled[&id].key,
            "promise 3: the reschedule of {id} changed its key"
        );
        if let (Some(body), false) = (&body, refused || ended) {
            let read = self.store.payload(&after).await.unwrap();
            check!(
                self,
                read.body == *body,
                "the reschedule of {id} did not replace its payload"
            );
        }
        let step = self.step;
        let expected = self.scheduled.get_mut(&id).unwrap();
        match answer {
            Move::Moved(_) => {
                expected.not_before = to;
                expected.waiting = None;
                expected.stopped = false;
                expected.moved_at = step;
                if body.is_some() {
                    expected.body = body;
                }
                self.totals.changes.moved += 1;
                self.terminal.remove(&id);
                if before.state.is_terminal() {
                    self.totals.changes.revived += 1;
                }
            }
            Move::AfterAttempt(_) => {
                expected.waiting = Some(WaitingChange::Move(to));
                if body.is_some() {
                    expected.body = body;
                }
                self.totals.changes.moved_after_attempt += 1;
            }
            _ => self.totals.changes.refused += 1,
        }
    }

    /// Erases a task's payload: its bytes are gone at once, and a task
    /// that has not ended is cancelled (after its attempt, if one is in
    /// flight).
    pub(super) async fn erase(&mut self) {
        let Some(id) = self.pick_task() else {
            return;
        };
        let before = self.rows[&id].clone();
        let answer = self.store.erase(id, BY).await.unwrap();
        let after = self.row(id).await;
        let Erase::Erased(t) = &answer else {
            check!(self, false, "the erase of {id} answered {answer:?}");
            return;
        };
        let cancels_now = matches!(before.state, TaskState::Pending | TaskState::RetryWait);
        let state = match before.state {
            _ if cancels_now => t.state == TaskState::Cancelled && t.waiting_change.is_none(),
            TaskState::Leased => {
                t.state == TaskState::Leased
                    && t.lease_token == before.lease_token
                    && t.waiting_change == Some(WaitingChange::Cancel)
            }
            _ => t.state == before.state && t.waiting_change == before.waiting_change,
        };
        check!(
            self,
            t.payload_erased_at.is_some() && state && *t == after,
            "the erase of {id} ({:?}) left {after:?}",
            before.state
        );
        let read = self.store.payload(&after).await;
        check!(
            self,
            matches!(read, Err(StoreError::Erased { .. })),
            "the payload of {id} reads {read:?} after its erase"
        );
        // An ended row changes only in its payload's erasure.
        if let Some(frozen) = self.terminal.get(&id) {
            let mut expected = frozen.clone();
            expected.payload_erased_at = after.payload_erased_at;
            expected.updated_at = after.updated_at;
            check!(
                self,
                expected == after,
                "the erase of {id}, ended, changed more than its payload"
            );
            self.terminal.insert(id, after.clone());
        }
        let expected = self.scheduled.get_mut(&id).unwrap();
        expected.body = None;
        expected.stopped = true;
        match before.state {
            _ if cancels_now => expected.waiting = None,
            TaskState::Leased => expected.waiting = Some(WaitingChange::Cancel),
            _ => {}
        }
        self.totals.changes.erased += 1;
    }

    /// Brings a destination's retries forward: every task of it waiting
    /// for a retry, and not yet due, is due now.
    pub(super) async fn retry_now(&mut self) {
        if self.destinations.is_empty() {
            return;
        }
        let (destination, _) =
            self.destinations[self.rng.random_range(0..self.destinations.len())].clone();
        let tenant = self
            .rng
            .random_bool(0.5)
            .then(|| TenantId::new("clinic").unwrap());
        let now = self.now();
        let waiting: Vec<TaskId> = self
            .rows
            .values()
            .filter(|t| {
                t.destination_id == destination
                    && t.state == TaskState::RetryWait
                    && t.available_at > now
            })
            .map(|t| t.id)
            .collect();
        let moved = self
            .store
            .retry_now(&destination, tenant.as_ref())
            .await
            .unwrap();
        check!(
            self,
            moved == waiting.len() as u64,
            "retry_now on {destination} moved {moved} of the {} tasks waiting for a retry",
            waiting.len()
        );
        for id in waiting {
            let row = self.row(id).await;
            check!(
                self,
                row.state == TaskState::RetryWait && row.available_at == now.max(row.not_before),
                "retry_now left {id} due at {} ({:?})",
                row.available_at,
                row.state
            );
        }
        self.totals.changes.retried_now += moved;
    }

    /// A process's periodic settling of the changes that waited for an
    /// attempt: every one whose attempt has ended, or whose lease ran out
    /// (the lost attempt logged `abandoned`), up to the limit.
    pub(super) async fn settle_changes(&mut self) {
        let region = match self.rng.random_bool(0.5) {
            true => Region::US,
            false => Region::EU,
        };
        let limit = match self.rng.random_range(0..4) {
            0 => self.rng.random_range(1..=2),
            _ => 500,
        };
        let now = self.now();
        let ready: Vec<Task> = self
            .rows
            .values()
            .filter(|t| {
                t.region == region
                    && t.waiting_change.is_some()
                    && (t.state != TaskState::Leased || t.lease_expires_at <= Some(now))
            })
            .cloned()
            .collect();
        let mut logged = Vec::with_capacity(ready.len());
        for t in &ready {
            logged.push(self.store.attempts(t.id).await.unwrap().len());
        }
        let settled = self.store.settle_changes(region, limit).await.unwrap();
        check!(
            self,
            settled == ready.len().min(limit as usize) as u64,
            "settle_changes({region}, {limit}) settled {settled} of {} ready",
            ready.len()
        );
        let mut seen = 0;
        for (t, logged) in ready.iter().zip(logged) {
            let row = self.row(t.id).await;
            if row.waiting_change.is_some() {
                check!(self, row == *t, "{} changed, its change not settled", t.id);
                continue;
            }
            seen += 1;
            check!(
                self,
                row.state != TaskState::Leased && row.lease_token.is_none(),
                "{} is still leased once its change settled",
                t.id
            );
            if t.state == TaskState::Leased {
                // Promise 5: the attempt the lease lost is logged with it.
                let attempts = self.store.attempts(t.id).await.unwrap();
                let lost = attempts
                    .iter()
                    .filter(|a| {
                        a.outcome == AttemptOutcome::Abandoned
                            && Some(a.lease_token) == t.lease_token
                    })
                    .count();
                check!(
                    self,
                    attempts.len() == logged + 1 && lost == 1,
                    "promise 5: the lease of {} ran out and its change settled, logging {} attempts ({lost} abandoned under it)",
                    t.id,
                    attempts.len() - logged
                );
                self.totals.changes.abandoned += 1;
            }
        }
        check!(
            self,
            seen == settled,
            "settle_changes answered {settled}, {seen} settled"
        );
        self.totals.changes.settled += settled;
    }
}
