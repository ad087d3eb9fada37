//! A destination's health in the model: the failure streak a finish
//! counts, disabling and enabling by hand, tasks failed at their horizon
//! while disabled, and the outbox of operational events.

use super::store::MemStore;
use crate::domain::{AuditAction, Destination, DestinationEvent, DestinationId, EventKind, Region};
use crate::store::contract::{AutoDisabled, Finish, Finished, StoreError};
use crate::store::rules::audit_entries::destination_changed;
use crate::store::rules::{health, lapsed};

impl MemStore {
    /// Counts an applied finish toward its destination's failure streak,
    /// disabling it (with its event) when the streak is long enough. The
    /// id of a destination it disabled, for the batch to report once done.
    pub(super) fn count_streak(&self, one: &Finish) -> Option<DestinationId> {
        let now = self.now();
        let mut state = self.state.lock();
        let task = state
            .by_id
            .get(&one.lease.task_id)
            .map(|i| &state.tasks[*i]);
        let id = task.map(|t| t.destination_id.clone())?;
        // A deleted destination's tombstone keeps no health, as the
        // databases' finish finds no row to count on.
        let d = state.live_destination_mut(&id)?;
        let record = &one.decision.record;
        if health::after_attempt(&mut d.destination, record, now, self.disable_rule) != Some(true) {
            return None;
        }
        let event = DestinationEvent::of(EventKind::Disabled, &d.destination, now);
        state.events.push(event);
        Some(id)
    }

    /// The destinations a batch disabled, as the whole batch left them (a
    /// later finish of the batch may have changed a streak since).
    pub(super) fn auto_disabled(&self, ids: Vec<DestinationId>, finished: &mut Finished) {
        let state = self.state.lock();
        finished.disabled.extend(ids.iter().filter_map(|id| {
            let d = state.live_destination(id)?;
            Some(AutoDisabled {
                destination: d.destination.clone(),
            })
        }));
    }

    pub(super) fn disable(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let d = state
            .live_destination_mut(id)
            .ok_or_else(|| StoreError::no_destination(id))?;
        let before = d.destination.clone();
        let event = health::disable(&mut d.destination, reason, now);
        let d = d.destination.clone();
        state.events.extend(event);
        let entry = destination_changed(AuditAction::DestinationDisable, Some(&before), &d);
        self.audit_in(&mut state, entry);
        Ok(d)
    }

    pub(super) fn fail_disabled(&self, region: Region, limit: u32) -> Result<u64, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let state = &mut *state;
        let mut failed = 0;
        let mut touched = 0;
        for task in state.tasks.iter_mut() {
            if touched >= limit {
                break;
            }
            let disabled = state
                .destinations
                .get(&task.destination_id)
                .is_some_and(|d| !d.destination.enabled);
            if !disabled || task.region != region {
                continue;
            }
            let settled = lapsed::settle_disabled(task, now);
            if settled.abandoned.is_some() || settled.failed {
                touched += 1;
            }
            failed += u64::from(settled.failed);
            state.attempts.extend(settled.abandoned);
        }
        Ok(failed)
    }

    pub(super) fn enable(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let d = state
            .live_destination_mut(id)
            .ok_or_else(|| StoreError::no_destination(id))?;
        let before = d.destination.clone();
        let event = health::enable(&mut d.destination, now);
        let d = d.destination.clone();
        state.events.extend(event);
        let entry = destination_changed(AuditAction::DestinationEnable, Some(&before), &d);
        self.audit_in(&mut state, entry);
        Ok(d)
    }

    pub(super) fn events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        let state = self.state.lock();
        Ok(state
            .events
            .iter()
            .filter(|e| e.region == region)
            .take(limit as usize)
            .cloned()
            .collect())
    }

    pub(super) fn forget_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        let mut state = self.state.lock();
        let before = state.events.len();
        state.events.retain(|e| !ids.contains(&e.id));
        Ok((before - state.events.len()) as u64)
    }
}
