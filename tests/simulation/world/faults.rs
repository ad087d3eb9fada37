//! Store faults the simulation injects into a delivery's own calls: a
//! wrapper around the world's store whose reads of what a request needs
//! (the payload, the destination) and whose hand-backs and unsent
//! failures fail while faults are armed, as a database that restarts or
//! drops a connection does. A fault either comes before the call (nothing
//! happened) or after it (it committed, and its answer was lost). Every
//! other call (the operator's changes included), and every call while
//! nothing is armed, goes straight through.

use remit::domain::{
    ApiToken, Attempt, AttemptRecord, ClaimedTask, Destination, DestinationChange,
    DestinationEvent, DestinationId, FailureReason, Lease, NewApiToken, NewDestination, NewTask,
    Payload, PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region, Rotation,
    SendTarget, SigningSecret, Task, TaskId, TokenHash, TokenId,
};
use remit::store::NewJob;
use remit::store::{
    AlertCheck, Alerts, AlertsChecked, ApiTokens, AuditScope, ClaimRequest, Deleted, Destinations,
    Finish, Finished, Leases, QuotaNote, RateGrant, RateRequest, Rates, Replayed, Schedule,
    Scheduled, Store, StoreError, TransitionOutcome, Upkeep,
};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

use super::SimStore;

// The operator's changes and the reports, which no fault touches.
mod pass_through;

/// How one faulted call fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The call never reached the database.
    Before,
    /// The call committed; its answer was lost on the way back.
    After,
}

/// What the armed faults did, for the checks.
#[derive(Debug, Default, Clone, Copy)]
pub struct Fired {
    pub faults: u64,
    /// Faults after a call: a write among them committed.
    pub lost_answers: u64,
}

/// Which faultable calls a fault waits for.
#[derive(Debug, Clone, Copy)]
enum Call {
    /// The payload and the destination's row.
    Read,
    /// A hand-back or an unsent failure.
    Write,
}

/// The world's store, with faults the world arms around a delivery step.
pub struct Faulty<S> {
    inner: S,
    armed: Mutex<Armed>,
}

#[derive(Default)]
struct Armed {
    reads: VecDeque<Fault>,
    writes: VecDeque<Fault>,
    fired: Fired,
}

impl<S: Store> Faulty<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            armed: Mutex::default(),
        }
    }

    /// The next reads and the next writes fail, one fault each, in order.
    pub fn arm(&self, reads: Vec<Fault>, writes: Vec<Fault>) {
        let mut armed = self.armed.lock().unwrap();
        armed.reads.extend(reads);
        armed.writes.extend(writes);
    }

    /// Drops the faults not yet fired and tells what the fired ones did.
    pub fn disarm(&self) -> Fired {
        let mut armed = self.armed.lock().unwrap();
        armed.reads.clear();
        armed.writes.clear();
        std::mem::take(&mut armed.fired)
    }

    /// Runs `call`, unless an armed fault fails it (before or after).
    async fn faulted<T>(
        &self,
        kind: Call,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let fault = {
            let mut armed = self.armed.lock().unwrap();
            let fault = match kind {
                Call::Read => armed.reads.pop_front(),
                Call::Write => armed.writes.pop_front(),
            };
            if let Some(fault) = fault {
                armed.fired.faults += 1;
                armed.fired.lost_answers += u64::from(fault == Fault::After);
            }
            fault
        };
        match fault {
            None => call.await,
            Some(Fault::Before) => Err(injected()),
            Some(Fault::After) => {
                // Its answer is lost, whatever it was.
                let _ = call.await;
                Err(injected())
            }
        }
    }
}

/// A fault the delivery step must treat as short: one `is_transient` says
/// is worth another try.
fn injected() -> StoreError {
    StoreError::Thread("injected store fault".into())
}

impl<S: SimStore> SimStore for Faulty<S> {
    async fn all_tasks(&self) -> Vec<Task> {
        self.inner.all_tasks().await
    }
}

impl<S: Store> Schedule for Faulty<S> {
    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        self.inner.schedule_many(batch).await
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        self.inner.task(id).await
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        self.inner.attempts(id).await
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        self.inner.replay(id, horizon).await
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        self.faulted(Call::Read, self.inner.payload(task)).await
    }
}

impl<S: Store> Leases for Faulty<S> {
    async fn next_due(&self, region: Region) -> Result<Option<Duration>, StoreError> {
        self.inner.next_due(region).await
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        self.inner.claim_due(request).await
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.faulted(Call::Write, self.inner.fail(lease, reason, record))
            .await
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.inner.abandon(lease, record).await
    }

    async fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        self.faulted(Call::Write, self.inner.hand_back(lease, after))
            .await
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        self.inner.extend_lease(lease, by).await
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Finished, StoreError> {
        self.inner.finish_many(batch).await
    }
}

impl<S: Store> Destinations for Faulty<S> {
    async fn update_destination(
        &self,
        id: &DestinationId,
        change: DestinationChange,
    ) -> Result<Destination, StoreError> {
        self.inner.update_destination(id, change).await
    }

    async fn delete_destination(
        &self,
        id: &DestinationId,
        cancel: Option<NewJob>,
    ) -> Result<Deleted, StoreError> {
        self.inner.delete_destination(id, cancel).await
    }

    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        self.inner.add_destination(new).await
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        self.inner.destination(id).await
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        self.faulted(Call::Read, self.inner.send_targets(ids)).await
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        self.inner.rotate_secret(id, rotation).await
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        self.inner.signing_secrets(id).await
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        self.inner.pause_destination(id, pause).await
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        self.inner.mark_refused(id, why).await
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        self.inner.disable_destination(id, reason).await
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        self.inner.enable_destination(id).await
    }
}

impl<S: Store> Rates for Faulty<S> {
    async fn take_tokens_many(
        &self,
        asks: &[RateRequest],
    ) -> Result<Vec<Option<RateGrant>>, StoreError> {
        self.inner.take_tokens_many(asks).await
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        self.inner.learn_quotas(notes).await
    }
}

impl<S: Store> ApiTokens for Faulty<S> {
    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        self.inner.add_api_token(new).await
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        self.inner.api_token_by_hash(hash).await
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        self.inner.api_tokens().await
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        self.inner.revoke_api_token(id).await
    }
}

impl<S: Store> Upkeep for Faulty<S> {
    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        self.inner.reconcile(request).await
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        self.inner.prune(request).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.inner.ping().await
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        self.inner.fail_disabled_past_horizon(region, limit).await
    }

    async fn prune_destination_stats(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        self.inner.prune_destination_stats(region, older_than).await
    }

    async fn prune_audit(
        &self,
        scope: AuditScope,
        older_than: Duration,
        batch_size: u32,
    ) -> Result<u64, StoreError> {
        self.inner.prune_audit(scope, older_than, batch_size).await
    }
}

impl<S: Store> Alerts for Faulty<S> {
    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        self.inner.destination_events(region, limit).await
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        self.inner.forget_destination_events(ids).await
    }

    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        self.inner.check_alerts(check).await
    }
}
