//! `Reports` on PostgreSQL: each call into the file that holds its
//! statements (`status`, `console`).
//!
//! # Layout
//! - `status`: what `remit status` and the gauges read; `status_sql`:
//!   its statements' text, for the test that plans them.
//! - `console`: what the console reads; `console_sql` likewise.

pub(super) mod console;
pub mod console_sql;
pub(super) mod status;
pub mod status_sql;

use super::PgStore;
use crate::domain::{Region, TaskId};
use crate::store::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use crate::store::{RegionCounts, RegionStatus, Reports, StatusReport, StoreError};

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
}
