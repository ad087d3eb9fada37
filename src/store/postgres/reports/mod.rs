//! `Reports` on PostgreSQL: each call into the file that holds its
//! statements (`status`, `queue`, `console`, `replication`; a
//! destination's stats and the audit log's pages in `destination_stats`
//! and `audit` beside this folder).
//!
//! # Layout
//! - `status`: what `remit status` reads; `status_sql`: its statements'
//!   text, for the test that plans them; `queue`: what the gauges read.
//! - `console`: what the console reads; `console_sql` likewise.
//! - `replication`: the server's replication and whether it is a
//!   replica, for `remit status` and the console.

pub(super) mod console;
pub mod console_sql;
mod queue;
mod replication;
pub(super) mod status;
pub mod status_sql;

use crate::domain::{AuditFilter, AuditPage, DestinationHour, DestinationId, Region, TaskId};
use crate::store::contract::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use crate::store::contract::{
    ReadSource, RegionCounts, RegionStatus, Replication, Reports, StatusReport, StoreError,
};
use crate::store::postgres::store::PgStore;
use chrono::{DateTime, Utc};

impl Reports for PgStore {
    async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        status::status(self, region).await
    }

    async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        status::region_counts(self, region).await
    }

    async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        queue::queue(self, region).await
    }

    async fn search_task_page(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        console::search_tasks(self, region, filter, before, limit).await
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
        super::audit::entries(self, filter, before, limit).await
    }

    async fn replication(&self) -> Result<Option<Replication>, StoreError> {
        replication::replication(self).await.map(Some)
    }

    async fn read_source(&self) -> Result<Option<ReadSource>, StoreError> {
        replication::read_source(self).await.map(Some)
    }
}
