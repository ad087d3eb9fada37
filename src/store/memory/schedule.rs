//! Scheduling in the model: one task at a time under the lock, with the
//! same rules (validation, idempotency, conflicts) as PostgreSQL's.

use super::*;

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
