//! Registering a destination and rotating its signing secret in the
//! model, each under the state's lock with its audit entry.

use super::state::DestinationRecord;
use super::MemStore;
use crate::domain::{
    AuditAction, Destination, DestinationId, NewDestination, Rotation, SigningSecret,
};
use crate::store::rules::audit_entries::{destination_changed, secret_rotated};
use crate::store::rules::destination_change::{revived_elsewhere, revived_while_cancelling};
use crate::store::rules::requests;
use crate::store::StoreError;

impl MemStore {
    /// `Store::add_destination`: a repeat changes nothing (and is recorded),
    /// other settings are a conflict.
    pub(super) fn register(&self, new: NewDestination) -> Result<Destination, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        // A deleted one of the same region comes back as new; its bucket
        // keeps numbering its grants on, as a database's row does.
        let mut granted = 0;
        if let Some(existing) = state.destinations.get(&new.id) {
            if existing.live() {
                let same = requests::same_destination_or_conflict(
                    existing.destination.clone(),
                    &existing.valid_values(&self.key, now)?,
                    &new,
                )?;
                let entry = destination_changed(AuditAction::DestinationCreate, Some(&same), &same);
                self.audit_in(&mut state, entry);
                return Ok(same);
            }
            if existing.destination.region != new.region {
                return Err(revived_elsewhere(
                    &new,
                    existing.destination.region.as_str(),
                ));
            }
            let live = state
                .tasks
                .iter()
                .filter(|t| t.destination_id == new.id && !t.state.is_terminal())
                .count() as u64;
            if live > 0 {
                return Err(revived_while_cancelling(&new, live));
            }
            granted = existing.rate_granted;
        }
        let mut record = DestinationRecord::new(&new);
        record.rate_granted = granted;
        if let Some(secret) = new.signing_secret {
            let id = state.secret_id();
            record.add_secret(&self.key, id, &secret, now);
        }
        let destination = record.destination.clone();
        state.destinations.insert(new.id, record);
        let entry = destination_changed(AuditAction::DestinationCreate, None, &destination);
        self.audit_in(&mut state, entry);
        Ok(destination)
    }

    /// `Store::rotate_secret`.
    pub(super) fn rotate_now(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let secret_id = state.secret_id();
        let record = state
            .live_destination_mut(id)
            .ok_or_else(|| StoreError::no_destination(id))?;
        let before = record.listed_secrets();
        let added = record.rotate(&self.key, secret_id, rotation, now);
        let after = record.listed_secrets();
        let entry = secret_rotated(id, record.destination.region, &before, &after);
        self.audit_in(&mut state, entry);
        Ok(added)
    }
}
