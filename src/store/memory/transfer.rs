//! Export and import in the model (see `transfer`), with the databases'
//! rules: each import is checked whole first (`contract/transfer_checks`), a record
//! already there is a repeat or a `Conflict`, the keys that sealed what
//! comes in are recorded, and the fencing tokens move past the imported
//! ones.

use super::state::{DestinationRecord as Held, State};
use super::store::MemStore;
use crate::domain::{Destination, Task, TaskId};
use crate::store::contract::{
    DestinationRecord, Imported, StoreError, StoredValue, TaskRecord, Transfer,
};
use crate::store::rules::audit_entries;
use crate::store::rules::import_conflicts::{
    highest_token_of, id_taken, same_imported_or_conflict, taken,
};

impl State {
    /// True when the task is here already; a `Conflict` when its (tenant,
    /// reminder) belongs to another task, or its id to another reminder.
    fn imported_already(&self, t: &Task) -> Result<bool, StoreError> {
        let holder = self
            .tasks
            .iter()
            .find(|held| held.tenant_id == t.tenant_id && held.reminder_id == t.reminder_id);
        match holder {
            Some(held) if held.id == t.id => Ok(true),
            Some(_) => Err(taken(t)),
            None if self.by_id.contains_key(&t.id) => Err(id_taken(t)),
            None => Ok(false),
        }
    }

    fn insert_imported(&mut self, record: TaskRecord) {
        // An erased payload has nothing to keep.
        if record.has_payload() {
            self.record_key(&record.sealed.key_fingerprint);
            self.payloads.insert(
                record.task.payload_ref,
                (record.content_type, record.sealed),
            );
        }
        let t = record.task;
        self.attempts.extend(record.attempts);
        // Ids handed out afterwards come after every imported one, as a
        // database's time-ordered ids do.
        self.next_id = self.next_id.max(t.id.0.as_u128());
        self.by_id.insert(t.id, self.tasks.len());
        self.tasks.push(t);
    }
}

impl Transfer for MemStore {
    async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        let state = self.state.lock();
        Ok(state
            .destinations
            .values()
            .map(|held| DestinationRecord {
                destination: held.destination.clone(),
                secrets: held.secrets.clone(),
                rate_tokens: held.rate_tokens,
                rate_refilled_at: held.rate_refilled_at,
                headers: held.headers.clone(),
                deleted_at: held.deleted_at,
            })
            .collect())
    }

    async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let state = self.state.lock();
        let mut tasks: Vec<&Task> = state
            .tasks
            .iter()
            .filter(|t| after.is_none_or(|a| t.id > a))
            .collect();
        tasks.sort_unstable_by_key(|t| t.id);
        tasks.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        tasks
            .into_iter()
            .map(|task| {
                let attempts = state
                    .attempts
                    .iter()
                    .filter(|a| a.task_id == task.id)
                    .cloned()
                    .collect();
                if task.payload_erased_at.is_some() {
                    return Ok(TaskRecord::erased(task.clone(), attempts));
                }
                let (content_type, sealed) = state.sealed_payload(task.payload_ref)?;
                Ok(TaskRecord {
                    task: task.clone(),
                    content_type,
                    sealed,
                    attempts,
                })
            })
            .collect()
    }

    /// Written to a copy that replaces the state only once every record
    /// went in: a conflict on any leaves nothing written, as the
    /// databases' transaction does.
    async fn import_checked_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        let ids: Vec<String> = records
            .iter()
            .map(|r| r.destination.id.to_string())
            .collect();
        let mut state = self.state.lock();
        let mut staged = state.clone();
        let mut imported = Imported::default();
        for record in records {
            if let Some(held) = staged.destinations.get(&record.destination.id) {
                same_imported_or_conflict(&held.destination, &held.secrets, &record)?;
                imported.already += 1;
                continue;
            }
            // A secret sealed under a key this store has not seen records
            // it, so a process without that key is refused at start.
            let sealed_secrets = record.secrets.iter().filter_map(|s| match &s.value {
                StoredValue::Sealed(sealed) => Some(sealed.key_fingerprint.as_slice()),
                StoredValue::Clear(_) => None,
            });
            let sealed_headers = record.headers.iter().filter_map(|h| h.key_fingerprint());
            for fingerprint in sealed_secrets.chain(sealed_headers) {
                staged.record_key(fingerprint);
            }
            let destination = Destination {
                has_signing_secret: !record.secrets.is_empty(),
                ..record.destination
            };
            let mut held = Held {
                destination,
                secrets: record.secrets,
                rate_tokens: record.rate_tokens,
                rate_refilled_at: record.rate_refilled_at,
                rate_granted: 0,
                quota: None,
                refused: None,
                headers: Vec::new(),
                deleted_at: record.deleted_at,
            };
            held.set_headers(record.headers);
            staged
                .destinations
                .insert(held.destination.id.clone(), held);
            imported.added += 1;
        }
        *state = staged;
        let entry = audit_entries::imported("destinations", &ids, imported);
        self.audit_in(&mut state, entry);
        Ok(imported)
    }

    /// Written to a copy, as `import_destinations` is.
    async fn import_checked_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
        let ids: Vec<String> = records.iter().map(|r| r.task.id.to_string()).collect();
        let mut state = self.state.lock();
        state.record_failures();
        let mut staged = state.clone();
        let mut imported = Imported::default();
        let mut highest_token = 0;
        for record in records {
            if staged.imported_already(&record.task)? {
                imported.already += 1;
                continue;
            }
            staged.failure_seen(&record.task);
            highest_token = highest_token_of(&record, highest_token);
            staged.insert_imported(record);
            imported.added += 1;
        }
        // A new lease must outrank every imported one; only ever forward.
        staged.next_token = staged.next_token.max(highest_token);
        *state = staged;
        self.audit_in(&mut state, audit_entries::imported("tasks", &ids, imported));
        Ok(imported)
    }
}
