//! `Reports`: what `remit status`, the runtime's gauges and the console
//! read. Reads only, each in one snapshot; none takes a lock.

use std::future::Future;

use crate::domain::{Region, TaskId};
use crate::store::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use crate::store::{RegionCounts, RegionStatus, StatusReport, StoreError};

pub trait Reports: Sync {
    /// The status of one region, or of every region.
    fn status(
        &self,
        region: Option<Region>,
    ) -> impl Future<Output = Result<StatusReport, StoreError>> + Send;

    /// One region's tasks by state, counted exactly as `status` counts
    /// them, without the rest of the report.
    fn region_counts(
        &self,
        region: Region,
    ) -> impl Future<Output = Result<RegionCounts, StoreError>> + Send;

    /// Only what a runtime's gauges need, cheaply: one region's counts by
    /// state, its oldest eligible task and its expired leases.
    fn queue(
        &self,
        region: Region,
    ) -> impl Future<Output = Result<RegionStatus, StoreError>> + Send;

    /// Up to `limit` tasks of `region` matching `filter`, newest first,
    /// starting below `before`; `limit` is held within
    /// 1..=[`MAX_PAGE`](crate::store::console::MAX_PAGE).
    fn search_tasks(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> impl Future<Output = Result<TaskPage, StoreError>> + Send {
        let limit = limit.clamp(1, crate::store::console::MAX_PAGE);
        self.search_task_page(region, filter, before, limit)
    }

    /// [`Reports::search_tasks`] with `limit` already within its bounds:
    /// what each store reads.
    fn search_task_page(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> impl Future<Output = Result<TaskPage, StoreError>> + Send;

    /// Every destination of `region`, by id, with its counts.
    fn destination_summaries(
        &self,
        region: Region,
    ) -> impl Future<Output = Result<Vec<DestinationSummary>, StoreError>> + Send;

    /// The region's last hour, minute by minute.
    fn activity(&self, region: Region)
        -> impl Future<Output = Result<Activity, StoreError>> + Send;
}
