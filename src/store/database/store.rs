//! The `Store` trait on `Database`: each call goes to whichever backend
//! this is, unchanged.

use chrono::{DateTime, Duration, Utc};

use super::Database;
use crate::domain::{
    ApiToken, Attempt, AttemptRecord, ClaimedTask, Destination, DestinationEvent, DestinationId,
    FailureReason, Lease, NewApiToken, NewDestination, NewTask, Payload, PruneReport, PruneRequest,
    ReconcileReport, ReconcileRequest, Region, Rotation, SendTarget, SigningSecret, Task, TaskId,
    TokenHash, TokenId,
};
use crate::store::{
    ClaimRequest, Finish, Finished, QuotaNote, Replayed, Scheduled, Store, StoreError,
    TokenRequest, Tokens, TransitionOutcome,
};

impl Store for Database {
    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        on_store!(self, s => Store::mark_refused(s, id, why).await)
    }

    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        on_store!(self, s => s.add_destination(new).await)
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        on_store!(self, s => s.destination(id).await)
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        on_store!(self, s => s.send_targets(ids).await)
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        on_store!(self, s => s.rotate_secret(id, rotation).await)
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        on_store!(self, s => s.signing_secrets(id).await)
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        on_store!(self, s => s.pause_destination(id, pause).await)
    }

    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        on_store!(self, s => s.take_tokens_many(asks).await)
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        on_store!(self, s => s.learn_quotas(notes).await)
    }

    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        on_store!(self, s => s.schedule_many(batch).await)
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        on_store!(self, s => s.task(id).await)
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        on_store!(self, s => s.attempts(id).await)
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        on_store!(self, s => s.replay(id, horizon).await)
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        on_store!(self, s => s.reconcile(request).await)
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        on_store!(self, s => s.prune(request).await)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        on_store!(self, s => s.ping().await)
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        on_store!(self, s => s.payload(task).await)
    }

    async fn next_due(&self, region: Region) -> Result<Option<Duration>, StoreError> {
        on_store!(self, s => s.next_due(region).await)
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        on_store!(self, s => s.claim_due(request).await)
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.fail(lease, reason, record).await)
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.abandon(lease, record).await)
    }

    async fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.hand_back(lease, after).await)
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.extend_lease(lease, by).await)
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Finished, StoreError> {
        on_store!(self, s => s.finish_many(batch).await)
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        on_store!(self, s => s.disable_destination(id, reason).await)
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        on_store!(self, s => s.fail_disabled_past_horizon(region, limit).await)
    }

    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        on_store!(self, s => s.destination_events(region, limit).await)
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        on_store!(self, s => s.forget_destination_events(ids).await)
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        on_store!(self, s => s.enable_destination(id).await)
    }

    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        on_store!(self, s => s.add_api_token(new).await)
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        on_store!(self, s => s.api_token_by_hash(hash).await)
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        on_store!(self, s => s.api_tokens().await)
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        on_store!(self, s => s.revoke_api_token(id).await)
    }
}
