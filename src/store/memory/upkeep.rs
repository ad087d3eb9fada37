//! `Upkeep` on the model: reconciliation, retention, the settling of
//! disabled destinations' tasks, and the ping.

use super::store::MemStore;
use crate::domain::{PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region};
use crate::store::contract::{AuditScope, StoreError, Upkeep};
use chrono::Duration;

impl Upkeep for MemStore {
    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        Ok(self.reconcile_now(request))
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        self.prune_now(request)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        self.fail_disabled(region, limit)
    }

    async fn prune_destination_stats(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        self.prune_stats(region, older_than).await
    }

    async fn prune_audit(
        &self,
        scope: AuditScope,
        older_than: Duration,
        batch_size: u32,
    ) -> Result<u64, StoreError> {
        self.prune_audit_log(scope, older_than, batch_size).await
    }
}
