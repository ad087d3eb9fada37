//! `Reports`: what `remit status`, the runtime's gauges, the API and the
//! console read: the status, task searches, destination summaries and
//! hours, the audit log, and where the reads come from. Reads only, each
//! in one snapshot; none takes a lock, so a replica may answer them all.

use std::future::Future;

use chrono::{DateTime, Utc};

use super::audit::MAX_AUDIT_PAGE;
use super::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use super::error::StoreError;
use super::replication::ReadSource;
use super::replication::Replication;
use super::status::RegionCounts;
use super::status::RegionStatus;
use super::status::StatusReport;
use crate::domain::{AuditFilter, AuditPage, DestinationHour, DestinationId, Region, TaskId};

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
    /// 1..=[`MAX_PAGE`](crate::store::contract::console::MAX_PAGE).
    fn search_tasks(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> impl Future<Output = Result<TaskPage, StoreError>> + Send {
        let limit = limit.clamp(1, crate::store::contract::console::MAX_PAGE);
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

    /// The hours of `id` that start at or after the hour holding `since`
    /// and before `until`, oldest first: each destination's health over
    /// time, one row per destination and hour, kept by the finish
    /// (`Leases::finish_many` counts every attempt it applies into its
    /// destination's hour in the same transaction; `domain::DestinationHour`
    /// says what counts where). An hour with no counted attempt has no row
    /// and is absent; so is every hour of a destination that does not
    /// exist.
    fn destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<DestinationHour>, StoreError>> + Send;

    /// The audit log's entries `filter` admits, newest first: up to
    /// `limit` (held within 1..=[`MAX_AUDIT_PAGE`]) with an id below
    /// `before` when given, and the cursor of the next page when there is
    /// one.
    fn audit_entries(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> impl Future<Output = Result<AuditPage, StoreError>> + Send {
        self.audit_page(filter, before, limit.clamp(1, MAX_AUDIT_PAGE))
    }

    /// [`Reports::audit_entries`] with `limit` already within its bounds:
    /// what each store reads.
    fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> impl Future<Output = Result<AuditPage, StoreError>> + Send;

    /// The server's replication: whether a commit waits for a standby.
    /// `None` from a store that has no standby (SQLite, the model).
    fn replication(&self) -> impl Future<Output = Result<Option<Replication>, StoreError>> + Send {
        async { Ok(None) }
    }

    /// Whether this handle's server is a replica and how far behind it
    /// is; `None` from a store that has no replica.
    fn read_source(&self) -> impl Future<Output = Result<Option<ReadSource>, StoreError>> + Send {
        async { Ok(None) }
    }
}
