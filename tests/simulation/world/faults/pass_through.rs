//! The calls no fault touches, passed straight to the world's store: an
//! operator's changes and the reports.

use chrono::{DateTime, Utc};
use remit::domain::{
    AuditFilter, AuditPage, DestinationHour, DestinationId, Region, TaskId, TenantId,
};
use remit::store::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use remit::store::{
    Cancel, Changes, Erase, ErasedTenant, Move, ReadSource, RegionCounts, RegionStatus,
    Replication, Reports, Reschedule, StatusReport, StoreError,
};

use super::super::SimStore;
use super::Faulty;

impl<S: Changes> Changes for Faulty<S> {
    async fn cancel(&self, id: TaskId, by: &str) -> Result<Cancel, StoreError> {
        self.inner.cancel(id, by).await
    }

    async fn reschedule(&self, id: TaskId, change: &Reschedule) -> Result<Move, StoreError> {
        self.inner.reschedule(id, change).await
    }

    async fn erase(&self, id: TaskId, by: &str) -> Result<Erase, StoreError> {
        self.inner.erase(id, by).await
    }

    async fn erase_tenant(
        &self,
        tenant: &TenantId,
        by: &str,
        limit: u32,
    ) -> Result<ErasedTenant, StoreError> {
        self.inner.erase_tenant(tenant, by, limit).await
    }

    async fn retry_now(
        &self,
        destination: &DestinationId,
        tenant: Option<&TenantId>,
    ) -> Result<u64, StoreError> {
        self.inner.retry_now(destination, tenant).await
    }

    async fn settle_changes(&self, region: Region, limit: u32) -> Result<u64, StoreError> {
        self.inner.settle_changes(region, limit).await
    }
}

impl<S: SimStore> Reports for Faulty<S> {
    async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        self.inner.status(region).await
    }

    async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        self.inner.region_counts(region).await
    }

    async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        self.inner.queue(region).await
    }

    async fn search_task_page(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        self.inner
            .search_task_page(region, filter, before, limit)
            .await
    }

    async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        self.inner.destination_summaries(region).await
    }

    async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        self.inner.activity(region).await
    }

    async fn destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        self.inner.destination_stats(id, since, until).await
    }

    async fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        self.inner.audit_page(filter, before, limit).await
    }

    async fn replication(&self) -> Result<Option<Replication>, StoreError> {
        self.inner.replication().await
    }

    async fn read_source(&self) -> Result<Option<ReadSource>, StoreError> {
        self.inner.read_source().await
    }
}
