//! An operator's change of a destination, and its deletion, in the model:
//! the rule every store applies (`rules::destination_change`) under the
//! one lock, with the databases' answers.

use crate::domain::{AuditAction, Destination, DestinationChange, DestinationId};
use crate::store::console::{check_new_job, NewReplayJob};
use crate::store::rules::audit_entries::{self, destination_changed};
use crate::store::rules::destination_change::{live_refusal, plan, DELETED_REASON};
use crate::store::{Deleted, Destinations, StoreError};

use super::MemStore;

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
        cancel: Option<NewReplayJob>,
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
}
