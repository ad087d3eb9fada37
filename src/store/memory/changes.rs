//! `Changes` in the model: each call under the lock, `rules::changes`
//! applied to the rows, the payload kept, replaced or dropped with them,
//! and the attempt a lease that ran out lost logged, as SQLite does.

use super::store::MemStore;

use super::state::State;
use crate::domain::{AuditAction, DestinationId, Region, Task, TaskId, TenantId};
use crate::store::contract::{Cancel, Changes, Erase, ErasedTenant, Move, Reschedule, StoreError};
use crate::store::rules::changes::{self, CancelStep, MoveAsked, MoveStep};
use crate::store::rules::{audit_entries, requests};

impl State {
    /// Erases the payload of the task at `i` (its sealed bytes dropped) and
    /// cancels it if it has not ended. Answers whether the payload was
    /// there until now, and whether the erase cancels the task.
    fn erase_row(
        &mut self,
        i: usize,
        by: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> (bool, bool) {
        let task: &mut Task = &mut self.tasks[i];
        let cancels = changes::erase_cancels(task);
        let erased = changes::erase(task, by, now);
        let payload_ref = task.payload_ref;
        self.payloads.remove(&payload_ref);
        (erased, cancels)
    }
}

impl Changes for MemStore {
    async fn cancel(&self, id: TaskId, by: &str) -> Result<Cancel, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        // A failed task may leave `failed` here: its failure is recorded
        // first, as the databases' triggers recorded it when it happened.
        state.record_failures();
        let Some(task) = state.task_mut(id) else {
            return Ok(Cancel::NotFound);
        };
        let before = task.clone();
        let step = changes::cancel(task, by, now);
        let task = task.clone();
        if step == CancelStep::Ended {
            return Ok(Cancel::Ended(task));
        }
        let entry = audit_entries::task_changed(AuditAction::TaskCancel, &before, &task);
        self.audit_in(&mut state, entry);
        Ok(match step {
            CancelStep::Now => Cancel::Cancelled(task),
            CancelStep::AfterAttempt => Cancel::AfterAttempt(task),
            _ => Cancel::AlreadyCancelled(task),
        })
    }

    async fn reschedule(&self, id: TaskId, change: &Reschedule) -> Result<Move, StoreError> {
        let to = requests::validate_reschedule(change)?;
        let now = self.now();
        let mut state = self.state.lock();
        state.record_failures();
        let Some(destination) = state.task_mut(id).map(|t| t.destination_id.clone()) else {
            return Ok(Move::NotFound);
        };
        let deleted = state
            .destinations
            .get(&destination)
            .is_some_and(|d| d.deleted_at.is_some());
        let Some(task) = state.task_mut(id) else {
            return Ok(Move::NotFound);
        };
        let before = task.clone();
        let asked = MoveAsked {
            new_payload: change.payload.is_some(),
            revive: change.revive,
            destination_deleted: deleted,
        };
        let step = changes::reschedule(task, to, asked, now);
        let task = task.clone();
        state.alert_records.moved(&before, &task);
        if let Some(refused) = changes::not_moved(step, &task) {
            return Ok(refused);
        }
        let after_attempt = step == MoveStep::AfterAttempt;
        if let Some(payload) = &change.payload {
            // Sealed as `schedule` seals it: bound to the same reference.
            let sealed = self
                .key
                .seal(task.payload_ref, &payload.content_type, &payload.body);
            state
                .payloads
                .insert(task.payload_ref, (payload.content_type.clone(), sealed));
        }
        let entry = audit_entries::task_changed(AuditAction::TaskReschedule, &before, &task);
        self.audit_in(&mut state, entry);
        Ok(if after_attempt {
            Move::AfterAttempt(task)
        } else {
            Move::Moved(task)
        })
    }

    async fn erase(&self, id: TaskId, by: &str) -> Result<Erase, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        // A failed task may leave `failed` here: its failure is recorded
        // first, as the databases' triggers recorded it when it happened.
        state.record_failures();
        let Some(&i) = state.by_id.get(&id) else {
            return Ok(Erase::NotFound);
        };
        let before = state.tasks[i].clone();
        state.erase_row(i, by, now);
        let after = state.tasks[i].clone();
        let entry = audit_entries::task_changed(AuditAction::TaskErase, &before, &after);
        self.audit_in(&mut state, entry);
        Ok(Erase::Erased(after))
    }

    async fn erase_tenant(
        &self,
        tenant: &TenantId,
        by: &str,
        limit: u32,
    ) -> Result<ErasedTenant, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        // A failed task may leave `failed` here: its failure is recorded
        // first, as the databases' triggers recorded it when it happened.
        state.record_failures();
        // By task id, as the databases walk them.
        let mut rows: Vec<(TaskId, usize)> = state
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| &t.tenant_id == tenant && t.payload_erased_at.is_none())
            .map(|(i, t)| (t.id, i))
            .collect();
        rows.sort_unstable();
        rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        let mut done = ErasedTenant::default();
        for (_, i) in rows {
            let (erased, cancels) = state.erase_row(i, by, now);
            if erased {
                done.erased += 1;
                done.cancelled += u64::from(cancels);
            }
        }
        self.audit_in(&mut state, audit_entries::tenant_erased(tenant, done));
        Ok(done)
    }

    async fn retry_now(
        &self,
        destination: &DestinationId,
        tenant: Option<&TenantId>,
    ) -> Result<u64, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        // Nothing moves for a destination that does not exist, and nothing
        // is recorded.
        let Some(region) = state
            .destinations
            .get(destination)
            .map(|d| d.destination.region)
        else {
            return Ok(0);
        };
        let mut moved = 0;
        for task in state.tasks.iter_mut().filter(|t| {
            &t.destination_id == destination && tenant.is_none_or(|tenant| &t.tenant_id == tenant)
        }) {
            moved += u64::from(changes::retry_now(task, now));
        }
        let entry = audit_entries::retried_now(destination, region, tenant, moved);
        self.audit_in(&mut state, entry);
        Ok(moved)
    }

    async fn settle_changes(&self, region: Region, limit: u32) -> Result<u64, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        // A failed task may leave `failed` here: its failure is recorded
        // first, as the databases' triggers recorded it when it happened.
        state.record_failures();
        let State {
            tasks,
            attempts,
            alert_records,
            ..
        } = &mut *state;
        let ready = tasks
            .iter_mut()
            .filter(|t| t.region == region && changes::settles(t, now))
            .take(usize::try_from(limit).unwrap_or(usize::MAX));
        let mut settled = 0;
        for task in ready {
            let before = task.clone();
            attempts.extend(changes::settle(task, now));
            alert_records.moved(&before, task);
            settled += 1;
        }
        Ok(settled)
    }
}
