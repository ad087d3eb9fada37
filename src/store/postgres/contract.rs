//! The contract's traits on PostgreSQL, each call passed to the module
//! that holds its statements. Kept apart from `PgStore` itself, so the
//! modules import the store and the store imports none of them.

use chrono::{DateTime, Duration, Utc};

use super::{
    alerts, api_tokens, audit, changes, claim, console, destination_changes, destinations, events,
    finish_many, lease, next_due, payload_keys, quota, rate, reads, reconcile, refusals, rekey,
    replay, replay_jobs, retention, schedule_many, secrets, send_targets, status, transfer,
    transitions, PgStore,
};
use crate::domain::{
    ApiToken, Attempt, AttemptRecord, AuditFilter, AuditPage, ClaimedTask, Destination,
    DestinationChange, DestinationEvent, DestinationId, FailureReason, Lease, NewApiToken,
    NewDestination, NewTask, Payload, PruneReport, PruneRequest, ReconcileReport, ReconcileRequest,
    Region, Rotation, SendTarget, SigningSecret, Task, TaskId, TenantId, TokenHash, TokenId,
};
use crate::payload_crypto::PayloadKey;
use crate::store::console::{
    Activity, DestinationSummary, NewReplayJob, ReplayJob, TaskFilter, TaskPage, MAX_PAGE,
};
use crate::store::rules::imports::{check_imported_destinations, check_imported_tasks};
use crate::store::{
    AlertCheck, Alerts, AlertsChecked, Audit, Cancel, Changes, ClaimRequest, Deleted,
    DestinationRecord, Destinations, Erase, ErasedTenant, Finish, Finished, Imported, KeyCount,
    Keys, Move, QuotaNote, RegionCounts, RegionStatus, Rekeyed, ReplayJobs, Replayed, Reports,
    Reschedule, Scheduled, StatusReport, Store, StoreError, TaskRecord, TokenRequest, Tokens,
    Transfer, TransitionOutcome,
};

impl Reports for PgStore {
    async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        status::status(self, region).await
    }

    async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        status::region_counts(self, region).await
    }

    async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        status::queue(self, region).await
    }

    async fn search_tasks(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        console::search_tasks(self, region, filter, before, limit.clamp(1, MAX_PAGE)).await
    }

    async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        console::destination_summaries(self, region).await
    }

    async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        console::activity(self, region).await
    }
}

impl Transfer for PgStore {
    async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        transfer::destinations(self).await
    }

    async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        transfer::tasks(self, after, limit).await
    }

    async fn import_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        check_imported_destinations(&records)?;
        transfer::import_destinations(self, records).await
    }

    async fn import_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
        check_imported_tasks(&records)?;
        transfer::import_tasks(self, records).await
    }
}

impl Keys for PgStore {
    fn payload_key(&self) -> &PayloadKey {
        &self.key
    }

    async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        payload_keys::record(self).await
    }

    async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        secrets::seal_clear(self).await
    }

    async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        rekey::counts(self).await
    }

    async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        rekey::batch(self, after, limit).await
    }

    async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        rekey::forget_unused(self).await
    }
}

impl ReplayJobs for PgStore {
    async fn create_replay_job(&self, new: NewReplayJob) -> Result<ReplayJob, StoreError> {
        replay_jobs::create(self, new).await
    }

    async fn replay_job(&self, id: uuid::Uuid) -> Result<Option<ReplayJob>, StoreError> {
        replay_jobs::get(self, id).await
    }

    async fn replay_jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<ReplayJob>, StoreError> {
        replay_jobs::list(self, region, unfinished_only, limit).await
    }

    async fn advance_replay_job(
        &self,
        id: uuid::Uuid,
        batch: u32,
    ) -> Result<ReplayJob, StoreError> {
        replay_jobs::advance(self, id, batch).await
    }
}

impl Changes for PgStore {
    async fn cancel(&self, id: TaskId, by: &str) -> Result<Cancel, StoreError> {
        changes::cancel(self, id, by).await
    }

    async fn reschedule(&self, id: TaskId, change: &Reschedule) -> Result<Move, StoreError> {
        changes::reschedule(self, id, change).await
    }

    async fn erase(&self, id: TaskId, by: &str) -> Result<Erase, StoreError> {
        changes::erase(self, id, by).await
    }

    async fn erase_tenant(
        &self,
        tenant: &TenantId,
        by: &str,
        limit: u32,
    ) -> Result<ErasedTenant, StoreError> {
        changes::erase_tenant(self, tenant, by, limit).await
    }

    async fn retry_now(
        &self,
        destination: &DestinationId,
        tenant: Option<&TenantId>,
    ) -> Result<u64, StoreError> {
        changes::retry_now(self, destination, tenant).await
    }

    async fn settle_changes(&self, region: Region, limit: u32) -> Result<u64, StoreError> {
        changes::settle_changes(self, region, limit).await
    }
}

impl Destinations for PgStore {
    async fn update_destination(
        &self,
        id: &DestinationId,
        change: DestinationChange,
    ) -> Result<Destination, StoreError> {
        destination_changes::update(self, id, change).await
    }

    async fn delete_destination(
        &self,
        id: &DestinationId,
        cancel: Option<NewReplayJob>,
    ) -> Result<Deleted, StoreError> {
        destination_changes::delete(self, id, cancel).await
    }
}

impl Alerts for PgStore {
    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        alerts::check(self, check).await
    }
}

impl Audit for PgStore {
    async fn audit_entries(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        audit::entries(self, filter, before, limit).await
    }

    async fn prune_audit(
        &self,
        scope: crate::store::AuditScope,
        older_than: chrono::Duration,
        batch_size: u32,
    ) -> Result<u64, StoreError> {
        audit::prune(self, scope, older_than, batch_size).await
    }
}

impl Store for PgStore {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        destinations::add_destination(self, new).await
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        destinations::destination(self, id).await
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        send_targets::send_targets(self, ids).await
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        secrets::rotate(self, id, rotation).await
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        secrets::list(self, id).await
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        destinations::pause_destination(self, id, pause).await
    }

    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        rate::take_tokens_many(self, asks).await
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        quota::learn_quotas(self, notes).await
    }

    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        schedule_many::schedule_many(self, batch).await
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        reads::task(self, id).await
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        reads::attempts(self, id).await
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        replay::replay(self, id, horizon).await
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        reconcile::reconcile(self, request).await
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        retention::prune(self, request).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        reads::ping(self).await
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        reads::payload(self, task).await
    }

    async fn next_due(&self, region: Region) -> Result<Option<Duration>, StoreError> {
        next_due::next_due(self, region).await
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        claim::claim_due(self, request).await
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        transitions::fail(self, lease, reason, record).await
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        transitions::abandon(self, lease, record).await
    }

    async fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        lease::hand_back(self, lease, after).await
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        lease::extend_lease(self, lease, by).await
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Finished, StoreError> {
        finish_many::finish_many(self, batch).await
    }

    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        api_tokens::add(self, new).await
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        api_tokens::by_hash(self, hash).await
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        api_tokens::list(self).await
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        api_tokens::revoke(self, id).await
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        refusals::mark_refused(self, id, why).await
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        destinations::disable(self, id, reason).await
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        destinations::fail_disabled_past_horizon(self, region, limit).await
    }

    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        events::events(self, region, limit).await
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        events::forget(self, ids).await
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        destinations::enable(self, id).await
    }
}
