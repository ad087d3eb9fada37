//! The five promises, checked after every step and once more at the end,
//! and the order of each line, checked at every send.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use remit::domain::{Task, TaskId, TaskState};
use remit::store::Store;

use super::{SimStore, World};

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
        for task in tasks.into_values() {
            if let Some(frozen) = self.terminal.get(&task.id) {
                check!(
                    self,
                    *frozen == task,
                    "a terminal row changed: {:?} -> {:?}",
                    frozen.state,
                    task.state
                );
            } else if task.state.is_terminal() {
                self.terminal.insert(task.id, task);
            }
        }
    }

    /// Ordering: a line (same destination and key) has one task on its way
    /// at a time: when a keyed task is sent, no other task of its line that
    /// has not ended has been attempted. And a task sent on its first
    /// attempt was claimed only once every task before it in its line
    /// (earlier in `not_before`, then id) that was scheduled by then had
    /// ended; one scheduled after that claim waits behind it instead.
    pub(super) async fn check_line(&mut self, task: &Task) {
        let Some(key) = &task.ordering_key else {
            return;
        };
        let (known_at_claim, attempted_before) = self.line_claims[&task.id];
        let line: Vec<(usize, TaskId, DateTime<Utc>)> = self
            .lines
            .iter()
            .enumerate()
            .filter(|(_, (id, destination, k, _))| {
                *id != task.id && destination == &task.destination_id && k == key
            })
            .map(|(i, (id, _, _, not_before))| (i, *id, *not_before))
            .collect();
        for (index, id, not_before) in line {
            let row = self.store.task(id).await.unwrap().unwrap();
            if row.state.is_terminal() {
                continue;
            }
            check!(
                self,
                row.attempt_count == 0,
                "ordering: {} of line {key} sent while {id} of its line is on its way ({:?})",
                task.id,
                row.state
            );
            let before = (not_before, id) < (task.not_before, task.id);
            check!(
                self,
                attempted_before || !before || index >= known_at_claim,
                "ordering: {} of line {key} sent while {id}, before it, is {:?}",
                task.id,
                row.state
            );
        }
    }

    pub(super) async fn check_final(&mut self) {
        for (id, (key, _)) in &self.scheduled {
            let task = &self.terminal[id];
            let sends = self.sends.get(id).map_or(&[][..], Vec::as_slice);
            check!(
                self,
                sends.iter().all(|(_, k)| k == key),
                "promise 3: {id} sent under another key"
            );
            if task.state == TaskState::Delivered {
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
    }
}
