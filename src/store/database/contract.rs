//! The contract's traits beside `Store` on `Database`: each call goes to
//! whichever backend this is, unchanged.

use super::handle::{on_store, Database};
use crate::domain::{
    ApiToken, Attempt, AttemptRecord, AuditFilter, AuditPage, ClaimedTask, Destination,
    DestinationChange, DestinationEvent, DestinationHour, DestinationId, FailureReason, Lease,
    NewApiToken, NewDestination, NewTask, Payload, PruneReport, PruneRequest, ReconcileReport,
    ReconcileRequest, Region, Rotation, SendTarget, SigningSecret, Task, TaskId, TenantId,
    TokenHash, TokenId,
};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use crate::store::contract::{
    AlertCheck, Alerts, AlertsChecked, ApiTokens, AuditScope, Cancel, Changes, ClaimRequest,
    Deleted, DestinationRecord, Destinations, Erase, ErasedTenant, Finish, Finished, Imported,
    Jobs, Keys, Leases, Move, QuotaNote, RateGrant, RateRequest, Rates, ReadSource, RegionCounts,
    RegionStatus, Replayed, Replication, Reports, Reschedule, Schedule, Scheduled, StatusReport,
    StoreError, TaskRecord, Transfer, TransitionOutcome, Upkeep,
};
use crate::store::contract::{Job, KeyCount, NewJob, Rekeyed};
use chrono::{DateTime, Duration, Utc};

impl Schedule for Database {
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

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        on_store!(self, s => s.payload(task).await)
    }
}

impl Leases for Database {
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
}

impl Destinations for Database {
    async fn update_destination(
        &self,
        id: &DestinationId,
        change: DestinationChange,
    ) -> Result<Destination, StoreError> {
        on_store!(self, s => s.update_destination(id, change).await)
    }

    async fn delete_destination(
        &self,
        id: &DestinationId,
        cancel: Option<NewJob>,
    ) -> Result<Deleted, StoreError> {
        on_store!(self, s => s.delete_destination(id, cancel).await)
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        on_store!(self, s => Destinations::mark_refused(s, id, why).await)
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

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        on_store!(self, s => s.disable_destination(id, reason).await)
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        on_store!(self, s => s.enable_destination(id).await)
    }
}

impl Rates for Database {
    async fn take_tokens_many(
        &self,
        asks: &[RateRequest],
    ) -> Result<Vec<Option<RateGrant>>, StoreError> {
        on_store!(self, s => s.take_tokens_many(asks).await)
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        on_store!(self, s => s.learn_quotas(notes).await)
    }
}

impl ApiTokens for Database {
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

impl Upkeep for Database {
    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        on_store!(self, s => s.reconcile(request).await)
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        on_store!(self, s => s.prune(request).await)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        on_store!(self, s => s.ping().await)
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        on_store!(self, s => s.fail_disabled_past_horizon(region, limit).await)
    }

    async fn prune_destination_stats(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        on_store!(self, s => Upkeep::prune_destination_stats(s, region, older_than).await)
    }

    async fn prune_audit(
        &self,
        scope: AuditScope,
        older_than: Duration,
        batch_size: u32,
    ) -> Result<u64, StoreError> {
        on_store!(self, s => Upkeep::prune_audit(s, scope, older_than, batch_size).await)
    }
}

impl Alerts for Database {
    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        on_store!(self, s => Alerts::check_alerts(s, check).await)
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
}

impl Changes for Database {
    async fn cancel(&self, id: TaskId, by: &str) -> Result<Cancel, StoreError> {
        on_store!(self, s => Changes::cancel(s, id, by).await)
    }

    async fn reschedule(&self, id: TaskId, change: &Reschedule) -> Result<Move, StoreError> {
        on_store!(self, s => Changes::reschedule(s, id, change).await)
    }

    async fn erase(&self, id: TaskId, by: &str) -> Result<Erase, StoreError> {
        on_store!(self, s => Changes::erase(s, id, by).await)
    }

    async fn erase_tenant(
        &self,
        tenant: &TenantId,
        by: &str,
        limit: u32,
    ) -> Result<ErasedTenant, StoreError> {
        on_store!(self, s => Changes::erase_tenant(s, tenant, by, limit).await)
    }

    async fn retry_now(
        &self,
        destination: &DestinationId,
        tenant: Option<&TenantId>,
    ) -> Result<u64, StoreError> {
        on_store!(self, s => Changes::retry_now(s, destination, tenant).await)
    }

    async fn settle_changes(&self, region: Region, limit: u32) -> Result<u64, StoreError> {
        on_store!(self, s => Changes::settle_changes(s, region, limit).await)
    }
}

impl Reports for Database {
    async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        on_store!(self, s => Reports::status(s, region).await)
    }

    async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        on_store!(self, s => Reports::region_counts(s, region).await)
    }

    async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        on_store!(self, s => Reports::queue(s, region).await)
    }

    async fn search_task_page(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        on_store!(self, s => Reports::search_task_page(s, region, filter, before, limit).await)
    }

    async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        on_store!(self, s => Reports::destination_summaries(s, region).await)
    }

    async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        on_store!(self, s => Reports::activity(s, region).await)
    }

    async fn destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        on_store!(self, s => Reports::destination_stats(s, id, since, until).await)
    }

    async fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        on_store!(self, s => Reports::audit_page(s, filter, before, limit).await)
    }

    async fn replication(&self) -> Result<Option<Replication>, StoreError> {
        on_store!(self, s => Reports::replication(s).await)
    }

    async fn read_source(&self) -> Result<Option<ReadSource>, StoreError> {
        on_store!(self, s => Reports::read_source(s).await)
    }
}

impl Jobs for Database {
    async fn create_job(&self, new: NewJob) -> Result<Job, StoreError> {
        on_store!(self, s => Jobs::create_job(s, new).await)
    }

    async fn job(&self, id: uuid::Uuid) -> Result<Option<Job>, StoreError> {
        on_store!(self, s => Jobs::job(s, id).await)
    }

    async fn jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        on_store!(self, s => Jobs::jobs(s, region, unfinished_only, limit).await)
    }

    async fn advance_job(&self, id: uuid::Uuid, batch: u32) -> Result<Job, StoreError> {
        on_store!(self, s => Jobs::advance_job(s, id, batch).await)
    }
}

impl Transfer for Database {
    async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        on_store!(self, s => Transfer::export_destinations(s).await)
    }

    async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        on_store!(self, s => Transfer::export_tasks(s, after, limit).await)
    }

    async fn import_checked_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        on_store!(self, s => Transfer::import_destinations(s, records).await)
    }

    async fn import_checked_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
        on_store!(self, s => Transfer::import_tasks(s, records).await)
    }
}

impl Keys for Database {
    fn payload_key(&self) -> &PayloadKey {
        on_store!(self, s => Keys::payload_key(s))
    }

    async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        on_store!(self, s => Keys::record_payload_key(s).await)
    }

    async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        on_store!(self, s => Keys::seal_clear_secrets(s).await)
    }

    async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        on_store!(self, s => Keys::sealed_counts(s).await)
    }

    async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        on_store!(self, s => Keys::rekey_batch(s, after, limit).await)
    }

    async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        on_store!(self, s => Keys::forget_unused_keys(s).await)
    }
}
