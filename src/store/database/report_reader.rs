//! [`ReportReader`]: the handle the reports read through, on the replica
//! `database.read_url` names or on the primary itself. It answers
//! [`Reports`] and nothing that writes, so no report can write, wherever
//! the handle points.

use chrono::{DateTime, Utc};

use super::handle::Database;
use crate::domain::{AuditFilter, AuditPage, DestinationHour, DestinationId, Region, TaskId};
use crate::store::contract::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use crate::store::contract::{
    ReadSource, RegionCounts, RegionStatus, Replication, Reports, StatusReport, StoreError,
};
use crate::store::postgres::Pooler;

/// A database handle that only reads reports.
#[derive(Debug, Clone)]
pub struct ReportReader {
    database: Database,
}

impl ReportReader {
    /// The reports read where `database` reads.
    pub fn on(database: Database) -> Self {
        Self { database }
    }

    /// The reports of `database` read from `url` (a replica, behind
    /// `pooler`) through a pool of its own; a SQLite store has no replica
    /// and answers itself.
    pub async fn replica_of(
        database: &Database,
        url: &str,
        pool_size: u32,
        pooler: Pooler,
    ) -> Result<Self, StoreError> {
        Ok(Self::on(
            database.reading_from(url, pool_size, pooler).await?,
        ))
    }
}

impl Reports for ReportReader {
    async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        self.database.status(region).await
    }

    async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        self.database.region_counts(region).await
    }

    async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        self.database.queue(region).await
    }

    async fn search_task_page(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        self.database
            .search_task_page(region, filter, before, limit)
            .await
    }

    async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        self.database.destination_summaries(region).await
    }

    async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        self.database.activity(region).await
    }

    async fn destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        self.database.destination_stats(id, since, until).await
    }

    async fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        self.database.audit_page(filter, before, limit).await
    }

    async fn replication(&self) -> Result<Option<Replication>, StoreError> {
        self.database.replication().await
    }

    async fn read_source(&self) -> Result<Option<ReadSource>, StoreError> {
        self.database.read_source().await
    }
}
