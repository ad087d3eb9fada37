//! Scheduling in the model: one task at a time under the lock, with the
//! same rules (validation, idempotency, conflicts) as PostgreSQL's.

use super::store::MemStore;
use crate::domain::{Attempt, AuditAction, NewTask, Payload, Task, TaskId};
use crate::store::contract::{Replayed, Schedule, Scheduled, StoreError};
use crate::store::rules::audit_entries::task_changed;
use crate::store::rules::{lifecycle, requests};
use chrono::Duration;

impl MemStore {
    /// What `schedule` does, once the lock is the only thing to wait for.
    pub(super) fn schedule_now(&self, new: NewTask) -> Result<Scheduled, StoreError> {
        let new = requests::validate(new)?;
        let now = self.now();
        let mut state = self.state.lock();
        // A deleted destination is refused as a missing one is.
        let region = state
            .live_destination(&new.destination_id)
            .map(|d| d.destination.region);
        requests::check_destination(region, &new)?;
        let existing = state
            .tasks
            .iter()
            .find(|t| t.tenant_id == new.tenant_id && t.reminder_id == new.reminder_id)
            .cloned();
        if let Some(existing) = existing {
            if existing.payload_erased_at.is_some() {
                return requests::erased_conflict(existing, &new);
            }
            let (content_type, sealed) = state
                .payloads
                .get(&existing.payload_ref)
                .cloned()
                .ok_or_else(|| StoreError::NotFound {
                    what: "payload",
                    id: existing.payload_ref.to_string(),
                })?;
            let body = self
                .key
                .open(existing.payload_ref, &content_type, &sealed)?;
            return requests::same_or_conflict(existing, &Payload { content_type, body }, &new);
        }
        state.next_id += 1;
        let id = TaskId(uuid::Uuid::from_u128(state.next_id));
        let payload_ref = uuid::Uuid::from_u128(state.next_id | (1 << 127));
        let sealed = self
            .key
            .seal(payload_ref, &new.payload.content_type, &new.payload.body);
        state
            .payloads
            .insert(payload_ref, (new.payload.content_type.clone(), sealed));
        let task = lifecycle::new_task(id, payload_ref, new, now);
        let index = state.tasks.len();
        state.by_id.insert(id, index);
        state.tasks.push(task.clone());
        Ok(Scheduled {
            task,
            created: true,
        })
    }
}

impl Schedule for MemStore {
    /// One `schedule` per task, in order: the model has nothing to batch.
    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        let mut answers = Vec::with_capacity(batch.len());
        for new in batch {
            answers.push(match self.schedule_now(new) {
                // The task's own answer: bad input, a conflicting repeat, or a
                // repeat whose stored payload this key cannot open.
                Err(
                    e @ (StoreError::Invalid(_)
                    | StoreError::Conflict { .. }
                    | StoreError::Payload(_)),
                ) => Err(e),
                Err(e) => return Err(e),
                Ok(scheduled) => Ok(scheduled),
            });
        }
        Ok(answers)
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        let state = self.state.lock();
        Ok(state.by_id.get(&id).map(|&i| state.tasks[i].clone()))
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        Ok(self
            .state
            .lock()
            .attempts
            .iter()
            .filter(|a| a.task_id == id)
            .cloned()
            .collect())
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        state.record_failures();
        let deleted = state.destination_deleted(id);
        let Some(task) = state.task_mut(id) else {
            return Ok(Replayed::NotFound);
        };
        let before = task.clone();
        if !lifecycle::replay(task, horizon, deleted, now) {
            return Ok(Replayed::NotFailed(task.clone()));
        }
        let after = task.clone();
        state.alert_records.moved(&before, &after);
        let entry = task_changed(AuditAction::TaskReplay, &before, &after);
        self.audit_in(&mut state, entry);
        Ok(Replayed::Replayed(after))
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        let (content_type, sealed) = self.state.lock().task_payload(task)?;
        let body = self
            .key
            .open(task.payload_ref, &content_type, &sealed)
            .map_err(|e| {
                self.key
                    .knowing_recorded(e, &self.state.lock().payload_keys)
            })?;
        Ok(Payload { content_type, body })
    }
}
