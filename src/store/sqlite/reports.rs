//! `Reports` on SQLite: each call into `status` or `console`.

use super::store::SqliteStore;
use crate::domain::{AuditFilter, AuditPage, DestinationHour, DestinationId, Region, TaskId};
use crate::store::contract::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use crate::store::contract::{RegionCounts, RegionStatus, Reports, StatusReport, StoreError};
use chrono::{DateTime, Utc};

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

    async fn search_task_page(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        SqliteStore::search_tasks(self, region, filter.clone(), before, limit).await
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

    async fn destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        self.read_destination_stats(id, since, until).await
    }

    async fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        self.read_audit_page(filter, before, limit).await
    }
}
