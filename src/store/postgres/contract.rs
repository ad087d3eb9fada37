//! The contract's traits beside `Store` on PostgreSQL, each call passed to
//! the module that holds its statements.

use super::{
    alerts, audit, changes, console, destination_changes, payload_keys, rekey, replay_jobs,
    secrets, status, transfer, PgStore,
};
use crate::domain::{
    AuditFilter, AuditPage, Destination, DestinationChange, DestinationId, Region, TaskId, TenantId,
};
use crate::payload_crypto::PayloadKey;
use crate::store::console::{
    Activity, DestinationSummary, NewReplayJob, ReplayJob, TaskFilter, TaskPage, MAX_PAGE,
};
use crate::store::rules::imports::{check_imported_destinations, check_imported_tasks};
use crate::store::{
    AlertCheck, Alerts, AlertsChecked, Audit, Cancel, Changes, Deleted, DestinationRecord,
    Destinations, Erase, ErasedTenant, Imported, KeyCount, Keys, Move, RegionCounts, RegionStatus,
    Rekeyed, ReplayJobs, Reports, Reschedule, StatusReport, StoreError, TaskRecord, Transfer,
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
