//! The model's data and the guarded transition every finish goes through.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use crate::domain::{
    Attempt, AttemptOutcome, AttemptRecord, Destination, DestinationId, Lease, Task, TaskId,
    TaskState,
};
use crate::payload_crypto::SealedPayload;
use crate::store::TransitionOutcome;

#[derive(Debug, Clone)]
pub(super) struct DestinationRecord {
    pub(super) destination: Destination,
    pub(super) secret: Option<String>,
    pub(super) rate_tokens: Option<f64>,
    pub(super) rate_refilled_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) destinations: BTreeMap<DestinationId, DestinationRecord>,
    /// Tasks in insertion order; ids are handed out from a counter so a
    /// seeded run is reproducible.
    pub(super) tasks: Vec<Task>,
    pub(super) by_id: HashMap<TaskId, usize>,
    pub(super) payloads: HashMap<uuid::Uuid, (String, SealedPayload)>,
    pub(super) attempts: Vec<Attempt>,
    pub(super) next_token: i64,
    pub(super) next_id: u128,
}

pub(super) fn attempt(
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
        consumer_id: lease.owner.clone(),
        outcome,
        observed: record.clone(),
        next_available_at: next,
        recorded_at: now,
    }
}

impl State {
    pub(super) fn task_mut(&mut self, id: TaskId) -> Option<&mut Task> {
        let i = *self.by_id.get(&id)?;
        self.tasks.get_mut(i)
    }

    /// The guard of every transition out of `leased`.
    pub(super) fn held(&mut self, lease: &Lease) -> Option<&mut Task> {
        self.task_mut(lease.task_id)
            .filter(|t| t.state == TaskState::Leased && t.lease_token == Some(lease.token))
    }

    pub(super) fn refused(
        &self,
        lease: &Lease,
        outcome: Option<AttemptOutcome>,
    ) -> TransitionOutcome {
        if !self.by_id.contains_key(&lease.task_id) {
            return TransitionOutcome::NotFound;
        }
        let repeated = outcome.is_some_and(|o| {
            self.attempts.iter().any(|a| {
                a.task_id == lease.task_id && a.lease_token == lease.token && a.outcome == o
            })
        });
        if repeated {
            TransitionOutcome::Applied
        } else {
            TransitionOutcome::Fenced
        }
    }

    pub(super) fn end_attempt(
        &mut self,
        lease: &Lease,
        (target, outcome): (TaskState, AttemptOutcome),
        available_at: Option<DateTime<Utc>>,
        reason: Option<String>,
        record: &AttemptRecord,
        now: DateTime<Utc>,
    ) -> TransitionOutcome {
        let Some(task) = self.held(lease) else {
            // As in PostgreSQL: an abandon is never a repeat, because the
            // reclaim that fenced it logged an `abandoned` row for the token.
            let repeat = (outcome != AttemptOutcome::Abandoned).then_some(outcome);
            let refusal = self.refused(lease, repeat);
            if refusal == TransitionOutcome::Fenced {
                let fenced = attempt(
                    lease,
                    AttemptOutcome::Fenced,
                    record,
                    None,
                    now,
                    lease.attempt.max(1),
                );
                self.attempts.push(fenced);
            }
            return refusal;
        };
        task.state = target;
        task.lease_token = None;
        task.lease_owner = None;
        task.lease_expires_at = None;
        task.available_at = available_at
            .unwrap_or(task.available_at)
            .max(task.not_before);
        task.failure_reason = reason;
        task.last_status = record.http_status;
        task.delivered_at = (target == TaskState::Delivered).then_some(now);
        task.finalized_at = target.is_terminal().then_some(now);
        task.updated_at = now;
        let number = task.attempt_count;
        self.attempts
            .push(attempt(lease, outcome, record, available_at, now, number));
        TransitionOutcome::Applied
    }

    pub(super) fn due(task: &Task, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match task.state {
            TaskState::Pending | TaskState::RetryWait
                if task.available_at <= now && task.not_before <= now =>
            {
                Some(task.available_at)
            }
            TaskState::Leased => task.lease_expires_at.filter(|at| *at <= now),
            _ => None,
        }
    }
}
