//! `Upkeep` on SQLite: reconciliation, retention, the settling of
//! disabled destinations' tasks, and the ping.

use super::maintenance;
use super::store::SqliteStore;
use crate::domain::{PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region};
use crate::store::contract::{AuditScope, StoreError, Upkeep};
use chrono::{DateTime, Duration, Utc};
use diesel::RunQueryDsl;

impl Upkeep for SqliteStore {
    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        let request = request.clone();
        // Only a reclaim writes; a report alone must not hold the write
        // lock while it reads.
        self.run(request.reclaim, move |conn, ctx| {
            maintenance::reconcile(conn, &request, ctx.now)
        })
        .await
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        crate::store::rules::requests::check_prune(request)?;
        // The cutoff is fixed once per run, as the other stores fix it, so
        // a run ends however fast tasks keep ending.
        let now = self.run(false, |_, ctx| Ok(ctx.now)).await?;
        let cutoff = now
            .checked_sub_signed(request.older_than)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let regions = match request.region {
            Some(region) => vec![region],
            None => {
                self.run(false, |conn, _| maintenance::regions(conn))
                    .await?
            }
        };
        let mut report = PruneReport::default();
        // Region by region, one short transaction per batch, so the
        // runtime's writes get the lock between them.
        let size = request.batch_size;
        for region in regions {
            loop {
                let (tasks, attempts, payloads) = self
                    .run(true, move |conn, _| {
                        maintenance::prune_batch(conn, region, cutoff, size)
                    })
                    .await?;
                report.add_batch(tasks, attempts, payloads);
                if tasks < u64::from(size) {
                    break;
                }
            }
        }
        Ok(report)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.run(false, |conn, _| {
            diesel::sql_query("SELECT 1").execute(conn)?;
            Ok(())
        })
        .await
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        self.run(true, move |conn, ctx| {
            maintenance::fail_disabled_past_horizon(conn, region, limit, ctx.now)
        })
        .await
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
