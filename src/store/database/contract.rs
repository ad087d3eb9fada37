//! The contract's traits beside `Store` on `Database`: each call goes to
//! whichever backend this is, unchanged.

use super::Database;
use crate::domain::{Destination, DestinationChange, DestinationId, Region, TaskId, TenantId};
use crate::payload_crypto::PayloadKey;
use crate::store::console::{
    Activity, DestinationSummary, NewReplayJob, ReplayJob, TaskFilter, TaskPage,
};
use crate::store::{
    AlertCheck, Alerts, AlertsChecked, Cancel, Changes, Deleted, DestinationRecord, Destinations,
    Erase, ErasedTenant, Imported, KeyCount, Keys, Move, RegionCounts, RegionStatus, Rekeyed,
    ReplayJobs, Reports, Reschedule, StatusReport, StoreError, TaskRecord, Transfer,
};

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

    async fn search_tasks(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        on_store!(self, s => Reports::search_tasks(s, region, filter, before, limit).await)
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

    async fn import_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        on_store!(self, s => Transfer::import_destinations(s, records).await)
    }

    async fn import_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
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

impl ReplayJobs for Database {
    async fn create_replay_job(&self, new: NewReplayJob) -> Result<ReplayJob, StoreError> {
        on_store!(self, s => ReplayJobs::create_replay_job(s, new).await)
    }

    async fn replay_job(&self, id: uuid::Uuid) -> Result<Option<ReplayJob>, StoreError> {
        on_store!(self, s => ReplayJobs::replay_job(s, id).await)
    }

    async fn replay_jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<ReplayJob>, StoreError> {
        on_store!(self, s => ReplayJobs::replay_jobs(s, region, unfinished_only, limit).await)
    }

    async fn advance_replay_job(
        &self,
        id: uuid::Uuid,
        batch: u32,
    ) -> Result<ReplayJob, StoreError> {
        on_store!(self, s => ReplayJobs::advance_replay_job(s, id, batch).await)
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
        cancel: Option<NewReplayJob>,
    ) -> Result<Deleted, StoreError> {
        on_store!(self, s => s.delete_destination(id, cancel).await)
    }
}

impl Alerts for Database {
    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        on_store!(self, s => Alerts::check_alerts(s, check).await)
    }
}
