//! `Destinations` on the model: registering, reading, rotating a signing
//! secret, pausing, disabling and enabling, an operator's change and a
//! deletion, each under the state's lock with its audit entry, by the
//! rules every store applies (`rules::destination_change` among them).

use super::state::DestinationRecord;
use super::store::MemStore;
use crate::domain::{
    AuditAction, Destination, DestinationChange, DestinationId, NewDestination, Rotation,
    SendTarget, SigningSecret,
};
use crate::store::contract::{check_new_job, Deleted, Destinations, NewJob, StoreError};
use crate::store::rules::audit_entries::{destination_changed, secret_rotated};
use crate::store::rules::destination_change::{
    live_refusal, plan, revived_elsewhere, revived_while_cancelling, DELETED_REASON,
};
use crate::store::rules::lifecycle;
use crate::store::rules::{audit_entries, requests};
use chrono::{DateTime, Duration, Utc};

impl MemStore {
    /// `Destinations::add_destination`: a repeat changes nothing (and is recorded),
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

    /// `Destinations::rotate_secret`.
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

impl Destinations for MemStore {
    async fn update_destination(
        &self,
        id: &DestinationId,
        change: DestinationChange,
    ) -> Result<Destination, StoreError> {
        let mut state = self.state.lock();
        let record = state
            .live_destination_mut(id)
            .ok_or_else(|| StoreError::no_destination(id))?;
        let plan = plan(&record.destination, &record.headers, &change, &self.key)?;
        let before = record.destination.clone();
        let headers = plan.headers.unwrap_or_else(|| record.headers.clone());
        let d = &mut record.destination;
        d.url = plan.url;
        *d.settings = plan.settings;
        d.health.overrides = plan.overrides;
        record.set_headers(headers);
        let after = record.destination.clone();
        let entry = destination_changed(AuditAction::DestinationUpdate, Some(&before), &after);
        self.audit_in(&mut state, entry);
        Ok(after)
    }

    async fn delete_destination(
        &self,
        id: &DestinationId,
        cancel: Option<NewJob>,
    ) -> Result<Deleted, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let destination = state
            .live_destination(id)
            .ok_or_else(|| StoreError::no_destination(id))?
            .destination
            .clone();
        let live_tasks = state
            .tasks
            .iter()
            .filter(|t| {
                t.destination_id == *id && t.region == destination.region && !t.state.is_terminal()
            })
            .count() as u64;
        // Checked before anything is written: a refusal leaves nothing
        // behind, as the databases' rolled-back transaction does.
        let cancel = match cancel {
            _ if live_tasks == 0 => None,
            None => return Err(live_refusal(id, live_tasks)),
            Some(job) => {
                check_new_job(&job)?;
                Some(job)
            }
        };
        let record = state
            .live_destination_mut(id)
            .ok_or_else(|| StoreError::no_destination(id))?;
        record.deleted_at = Some(now);
        // A deleted destination keeps no credential.
        record.secrets.clear();
        record.set_headers(Vec::new());
        let d = &mut record.destination;
        d.enabled = false;
        d.has_signing_secret = false;
        d.health.disabled_reason = Some(DELETED_REASON.to_owned());
        d.health.disabled_at = Some(now);
        let after = record.destination.clone();
        let entry = destination_changed(AuditAction::DestinationDelete, Some(&destination), &after);
        self.audit_in(&mut state, entry);
        let cancel_job = cancel.map(|job| state.record_job(job, now));
        if let Some(job) = &cancel_job {
            self.audit_in(&mut state, audit_entries::job_created(job));
        }
        Ok(Deleted {
            destination,
            live_tasks,
            cancel_job,
        })
    }

    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        self.register(new)
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        self.rotate_now(id, rotation)
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        let state = self.state.lock();
        let record = state
            .live_destination(id)
            .ok_or_else(|| StoreError::no_destination(id))?;
        Ok(record.listed_secrets())
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        Ok(self
            .state
            .lock()
            .live_destination(id)
            .map(|d| d.destination.clone()))
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        let now = self.now();
        let state = self.state.lock();
        let target = |id| {
            state
                .live_destination(id)
                .map(|record| {
                    let mut destination = record.destination.clone();
                    destination.settings.headers = record
                        .headers
                        .iter()
                        .map(|h| h.opened(&self.key, id.as_str()))
                        .collect::<Result<_, _>>()?;
                    Ok(SendTarget {
                        destination,
                        signing_secrets: record.valid_secrets(&self.key, now)?,
                        pause_left: record
                            .destination
                            .paused_until
                            .map(|until| until - now)
                            .filter(|left| *left > Duration::zero()),
                    })
                })
                .transpose()
        };
        ids.iter().map(target).collect()
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let record = state
            .live_destination_mut(id)
            .ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
        let paused = lifecycle::pause(record.destination.paused_until, pause, now);
        record.destination.paused_until = Some(paused);
        Ok(paused)
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        let now = self.now();
        if let Some(record) = self.state.lock().destinations.get_mut(id) {
            record.refused = Some((why, now));
        }
        Ok(())
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        self.disable(id, reason)
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        self.enable(id)
    }
}
