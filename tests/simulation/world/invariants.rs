//! The five promises, checked after every step and once more at the end;
//! the operator's changes that waited for an attempt, followed to their
//! settling after every step; and the order of each line, checked at every
//! claim and send.

use remit::store::{Reports, Schedule};
use std::collections::HashMap;

use remit::domain::{Task, TaskId, TaskState, WaitingChange};

use super::{LineClaim, SimStore, World};

impl<S: SimStore> World<S> {
    pub(super) async fn check_invariants(&mut self) {
        let now = self.now();
        let tasks: HashMap<TaskId, Task> = self
            .store
            .all_tasks()
            .await
            .into_iter()
            .map(|t| (t.id, t))
            .collect();
        check!(
            self,
            tasks.len() == self.scheduled.len(),
            "promise 4: {} tasks for {} requests",
            tasks.len(),
            self.scheduled.len()
        );
        // Promise 2: no task is held by two live leases.
        let mut live: HashMap<TaskId, &str> = HashMap::new();
        for consumer in &self.consumers {
            for entry in &consumer.in_flight {
                let t = &entry.claimed;
                let row = &tasks[&t.task.id];
                let current =
                    row.state == TaskState::Leased && row.lease_token == Some(t.lease_token);
                if current && t.lease_expires_at > now {
                    if let Some(other) = live.insert(t.task.id, &consumer.name) {
                        panic!(
                            "seed={} step={}: promise 2: {} held by {other} and {}",
                            self.seed, self.step, t.task.id, consumer.name
                        );
                    }
                }
            }
        }
        self.follow_changes(&tasks);
        for task in tasks.values() {
            if let Some(frozen) = self.terminal.get(&task.id) {
                check!(
                    self,
                    frozen == task,
                    "a terminal row changed: {:?} -> {:?}",
                    frozen.state,
                    task.state
                );
            } else if task.state.is_terminal() && task.waiting_change.is_none() {
                // Ended for good, unless an operator brings it back (a
                // replay, or a move by a caller who may replay).
                self.terminal.insert(task.id, task.clone());
            }
        }
        self.rows = tasks;
    }

    /// The changes that waited for an attempt: a row waits for exactly the
    /// change the operator asked last, and once it has settled the row is
    /// what the change says (a cancel ended it unless the attempt failed or
    /// delivered it; a move moved it unless the attempt delivered it). A
    /// task cancelled or erased with nothing waiting has ended.
    fn follow_changes(&mut self, tasks: &HashMap<TaskId, Task>) {
        let mut settled = Vec::new();
        for task in tasks.values() {
            let id = task.id;
            let expected = &self.scheduled[&id];
            match (expected.waiting, task.waiting_change) {
                (asked, Some(waits)) => check!(
                    self,
                    asked == Some(waits),
                    "{id} waits for {waits:?}, the operator's change is {asked:?}"
                ),
                (Some(asked), None) => settled.push((id, asked)),
                (None, None) => check!(
                    self,
                    !expected.stopped || task.state.is_terminal(),
                    "{id} was cancelled or erased, yet is {:?}",
                    task.state
                ),
            }
        }
        for (id, asked) in settled {
            let task = &tasks[&id];
            let expected = &self.scheduled[&id];
            match asked {
                // A delivery makes the change lapse, and a move lapses on a
                // task the attempt failed (bringing it back is a replay's).
                _ if task.state == TaskState::Delivered => {}
                WaitingChange::Move(_) if task.state == TaskState::Failed => {}
                WaitingChange::Cancel => check!(
                    self,
                    matches!(task.state, TaskState::Cancelled | TaskState::Failed),
                    "the cancel of {id} settled as {:?}",
                    task.state
                ),
                WaitingChange::Move(to) => {
                    check!(
                        self,
                        !expected.stopped,
                        "{id}: a move that waited for its attempt brought it back ({:?}, due {}) after the operator's {} (payload {})",
                        task.state,
                        task.not_before,
                        if expected.body.is_none() { "erase" } else { "cancel" },
                        if task.payload_erased_at.is_some() { "erased" } else { "there" }
                    );
                    check!(
                        self,
                        task.not_before == to
                            && matches!(task.state, TaskState::Pending | TaskState::RetryWait),
                        "the move of {id} to {to} settled as {:?} due {}",
                        task.state,
                        task.not_before
                    );
                }
            }
            let step = self.step;
            let expected = self.scheduled.get_mut(&id).unwrap();
            expected.waiting = None;
            let lapsed = matches!(task.state, TaskState::Delivered | TaskState::Failed);
            if let (WaitingChange::Move(to), false) = (asked, lapsed) {
                expected.not_before = to;
                expected.moved_at = step;
            }
        }
    }

    /// The other tasks of a keyed task's line, their rows as they stand:
    /// nothing but the step's own task changes them during a step, and a
    /// claim updates the rows it took.
    fn line_of(&self, task: &Task) -> Vec<&Task> {
        let Some(key) = &task.ordering_key else {
            return Vec::new();
        };
        self.lines
            .iter()
            .filter(|(id, destination, k)| {
                *id != task.id && *destination == task.destination_id && k == key
            })
            .map(|(id, _, _)| &self.rows[id])
            .collect()
    }

    /// Ordering, at a claim: a keyed task is claimed only at the head of
    /// its line (same destination and key), as the rows stand once the
    /// claim committed: no other task of the line that has not ended comes
    /// before it. One attempted before (sent, or taken to be) comes before
    /// every one not yet attempted; otherwise the earlier `not_before`,
    /// then id, goes first (an operator's move changes a task's place).
    /// So a line has one task on its way at a time. Remembers how many
    /// attempts each other task of the line had, for [`Self::check_line`].
    pub(super) fn check_line_claim(&mut self, task: &Task) {
        if task.ordering_key.is_none() {
            return;
        }
        let attempted_before = task.attempt_count > 1;
        let line = self.line_of(task);
        for other in &line {
            if other.finalized_at.is_some() {
                continue;
            }
            let before = (other.not_before, other.id) < (task.not_before, task.id);
            let holds_back = match (other.attempt_count > 0, attempted_before) {
                (true, false) => true,
                (false, true) => false,
                _ => before,
            };
            check!(
                self,
                !holds_back,
                "ordering: {} (attempted before: {attempted_before}) claimed while {} of its line is {:?} with {} attempts, due {} (it is due {})",
                task.id,
                other.id,
                other.state,
                other.attempt_count,
                other.not_before,
                task.not_before
            );
        }
        let attempts = line.iter().map(|t| (t.id, t.attempt_count)).collect();
        let claim = LineClaim {
            step: self.step,
            attempts,
        };
        self.line_claims.insert(task.id, claim);
    }

    /// Ordering, at a send: nothing else of the line has started since its
    /// claim (a task scheduled since waits behind it), unless an operator
    /// moved that task, or brought it back, since: it then takes the place
    /// its new deadline gives it, and one attempted before may go beside a
    /// task already on its way, as a replay may.
    pub(super) fn check_line(&self, task: &Task) {
        if task.ordering_key.is_none() {
            return;
        }
        let line = self.line_of(task);
        let claim = &self.line_claims[&task.id];
        for other in &line {
            if self.scheduled[&other.id].moved_at >= claim.step {
                continue;
            }
            let then = claim.attempts.get(&other.id).copied().unwrap_or(0);
            check!(
                self,
                other.attempt_count == then,
                "ordering: {} sent while {} of its line started since its claim ({then} -> {} attempts, {:?})",
                task.id,
                other.id,
                other.attempt_count,
                other.state
            );
        }
    }

    pub(super) async fn check_final(&mut self) {
        for (id, expected) in &self.scheduled {
            let key = &expected.key;
            let task = &self.terminal[id];
            let sends = self.sends.get(id).map_or(&[][..], Vec::as_slice);
            check!(
                self,
                sends.iter().all(|(_, k)| k == key) && task.idempotency_key == *key,
                "promise 3: {id} sent under another key"
            );
            if task.state == TaskState::Cancelled {
                check!(
                    self,
                    expected.stopped && task.cancelled.is_some() && task.failure_reason.is_none(),
                    "{id} ended cancelled, though no cancel or erase of it stands"
                );
            } else if task.state == TaskState::Delivered {
                check!(self, !sends.is_empty(), "{id} delivered without a send");
                let delivered = self
                    .store
                    .attempts(*id)
                    .await
                    .unwrap()
                    .iter()
                    .filter(|a| a.outcome == remit::domain::AttemptOutcome::Delivered)
                    .count();
                check!(
                    self,
                    delivered == 1,
                    "{id} delivered {delivered} times in the log"
                );
            } else {
                let reason = task.failure_reason.clone().unwrap_or_default();
                check!(
                    self,
                    ["http_404", "max_attempts", "retry_horizon"].contains(&reason.as_str()),
                    "{id} failed with an unexpected reason {reason}"
                );
            }
            let attempts = u64::try_from(task.attempt_count).unwrap_or(0);
            self.totals.duplicates +=
                (sends.len() as u64).saturating_sub(attempts.min(sends.len() as u64));
        }
        self.check_hours().await;
    }

    /// Each destination's hours count exactly the attempts its finishes
    /// applied with an exchange: the log's ended attempts (delivered,
    /// retry_wait, failed) with a status or a transport error.
    async fn check_hours(&mut self) {
        use remit::domain::{AttemptClass, AttemptOutcome};
        let mut logged: HashMap<remit::domain::DestinationId, u64> = HashMap::new();
        for (id, task) in &self.terminal {
            let counted = self
                .store
                .attempts(*id)
                .await
                .unwrap()
                .iter()
                .filter(|a| {
                    matches!(
                        a.outcome,
                        AttemptOutcome::Delivered
                            | AttemptOutcome::RetryWait
                            | AttemptOutcome::Failed
                    ) && AttemptClass::of(&a.observed).is_some()
                })
                .count() as u64;
            *logged.entry(task.destination_id.clone()).or_default() += counted;
        }
        let (from, until) = (super::start(), self.now() + chrono::Duration::hours(1));
        for (destination, _) in self.destinations.clone() {
            let hours = self
                .store
                .destination_stats(&destination, from, until)
                .await
                .unwrap();
            let kept: u64 = hours.iter().map(|h| h.counts.attempts()).sum();
            let expected = logged.get(&destination).copied().unwrap_or(0);
            check!(
                self,
                kept == expected,
                "{destination}'s hours count {kept} attempts, its log {expected}"
            );
        }
    }
}
