//! The contract's traits beside `Store` on SQLite, each call passed to
//! the method of the file that does it.

use super::SqliteStore;
use crate::domain::{Region, TaskId};
use crate::payload_crypto::PayloadKey;
use crate::store::console::{
    Activity, DestinationSummary, NewReplayJob, ReplayJob, TaskFilter, TaskPage, MAX_PAGE,
};
use crate::store::rules::imports::{check_imported_destinations, check_imported_tasks};
use crate::store::{
    AlertCheck, Alerts, AlertsChecked, DestinationRecord, Imported, KeyCount, Keys, RegionCounts,
    RegionStatus, Rekeyed, ReplayJobs, Reports, StatusReport, StoreError, TaskRecord, Transfer,
};

impl Reports for SqliteStore {
    async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        SqliteStore::status(self, region).await
    }

    async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        SqliteStore::region_counts(self, region).await
    }

    async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        SqliteStore::queue(self, region).await
    }

    async fn search_tasks(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        SqliteStore::search_tasks(
            self,
            region,
            filter.clone(),
            before,
            limit.clamp(1, MAX_PAGE),
        )
        .await
    }

    async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        SqliteStore::destination_summaries(self, region).await
    }

    async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        SqliteStore::activity(self, region).await
    }
}

impl Transfer for SqliteStore {
    async fn export_destinations(&self) -> Result<Vec<DestinationRecord>, StoreError> {
        SqliteStore::export_destinations(self).await
    }

    async fn export_tasks(
        &self,
        after: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        SqliteStore::export_tasks(self, after, limit).await
    }

    async fn import_destinations(
        &self,
        records: Vec<DestinationRecord>,
    ) -> Result<Imported, StoreError> {
        check_imported_destinations(&records)?;
        SqliteStore::import_destinations(self, records).await
    }

    async fn import_tasks(&self, records: Vec<TaskRecord>) -> Result<Imported, StoreError> {
        check_imported_tasks(&records)?;
        SqliteStore::import_tasks(self, records).await
    }
}

impl Keys for SqliteStore {
    fn payload_key(&self) -> &PayloadKey {
        self.key()
    }

    async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        SqliteStore::record_payload_key(self).await
    }

    async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        SqliteStore::seal_clear_secrets(self).await
    }

    async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        SqliteStore::sealed_counts(self).await
    }

    async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        SqliteStore::rekey_batch(self, after, limit).await
    }

    async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        SqliteStore::forget_unused_keys(self).await
    }
}

impl ReplayJobs for SqliteStore {
    async fn create_replay_job(&self, new: NewReplayJob) -> Result<ReplayJob, StoreError> {
        SqliteStore::create_replay_job(self, new).await
    }

    async fn replay_job(&self, id: uuid::Uuid) -> Result<Option<ReplayJob>, StoreError> {
        SqliteStore::replay_job(self, id).await
    }

    async fn replay_jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<ReplayJob>, StoreError> {
        SqliteStore::replay_jobs(self, region, unfinished_only, limit).await
    }

    async fn advance_replay_job(
        &self,
        id: uuid::Uuid,
        batch: u32,
    ) -> Result<ReplayJob, StoreError> {
        SqliteStore::advance_replay_job(self, id, batch).await
    }
}

impl Alerts for SqliteStore {
    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        self.check_alerts_on_file(check).await
    }
}
