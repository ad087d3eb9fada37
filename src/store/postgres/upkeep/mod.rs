//! `Upkeep` on PostgreSQL: reconciliation (`reconcile`), retention
//! (`retention`), the ping (`reads`), and here the settling of disabled
//! destinations' tasks.
//!
//! # Layout
//! - `reconcile`: the reconciliation checks.
//! - `retention`: pruning ended tasks.

pub(super) mod reconcile;
pub(super) mod retention;

use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::schedule::reads;
use crate::domain::{PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region};
use crate::store::contract::{AuditScope, StoreError, Upkeep};
use crate::store::postgres::store::PgStore;
use chrono::Duration;

impl Upkeep for PgStore {
    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        reconcile::reconcile(self, request).await
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        retention::prune(self, request).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        reads::ping(self).await
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
        let mut conn = self.conn().await?;
        let settled: FailedCount = diesel::sql_query(FAIL_DISABLED_SQL)
            .bind::<Nullable<Timestamptz>, _>(self.clock.now_param())
            .bind::<Text, _>(region.as_str())
            .bind::<BigInt, _>(i64::from(limit))
            .get_result(&mut conn)
            .await?;
        Ok(u64::try_from(settled.failed).unwrap_or(0))
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
        super::audit::prune(self, scope, older_than, batch_size).await
    }
}

/// $1 the store's now (NULL: the database's), $2 the region, $3 the most
/// rows of each kind. As `lapsed::settle_disabled`: an expired lease of
/// a disabled destination (no claim would ever reclaim it) is handed back
/// with its lost attempt logged as `abandoned`, and fails at once when its
/// horizon has passed; an unleased row past its horizon fails. SKIP LOCKED
/// passes a row a claim or a finish holds. Answers how many failed.
pub const FAIL_DISABLED_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now),
-- Whether the region has a disabled destination at all. Both scans test it
-- once, before they start (a one-time filter): with none disabled, the
-- sweep reads nothing of the queue, however long it is. With some, the
-- plan is the join below, which the planner estimates from
-- `destinations`' own statistics (an array of their ids was estimated as
-- a scan of the queue, over the cost at which a stock server compiles a
-- plan).
disabled AS MATERIALIZED (
    SELECT EXISTS (SELECT 1 FROM destinations d WHERE d.region = $2 AND NOT d.enabled) AS present
),
lapsed AS (
    SELECT t.id, t.attempt_count, t.lease_token, t.lease_owner,
           t.retry_horizon_at <= clock.now AS expired
    FROM task_queue live JOIN tasks t ON t.id = live.task_id
         JOIN destinations d ON d.id = t.destination_id, clock
    WHERE live.region = $2 AND (SELECT present FROM disabled)
      AND t.finalized_at IS NULL AND t.state = 'leased'
      AND NOT d.enabled AND t.lease_expires_at <= clock.now
    ORDER BY t.lease_expires_at
    LIMIT $3
    FOR UPDATE OF t SKIP LOCKED
),
logged AS (
    INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, outcome, recorded_at)
    SELECT l.id, l.attempt_count, l.lease_token, l.lease_owner, 'abandoned', clock.now
    FROM lapsed l, clock
),
reclaimed AS (
    UPDATE tasks t
    SET state = CASE WHEN l.expired THEN 'failed' ELSE 'retry_wait' END::task_state,
        lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL,
        available_at = GREATEST(clock.now, t.not_before),
        failure_reason = CASE WHEN l.expired THEN 'destination_disabled' END,
        finalized_at = CASE WHEN l.expired THEN clock.now END,
        updated_at = clock.now
    FROM lapsed l, clock
    WHERE t.id = l.id AND t.state = 'leased'
    RETURNING l.expired
),
doomed AS (
    SELECT t.id
    FROM task_queue live JOIN tasks t ON t.id = live.task_id
         JOIN destinations d ON d.id = t.destination_id, clock
    WHERE live.region = $2 AND (SELECT present FROM disabled)
      AND t.finalized_at IS NULL AND t.state IN ('pending', 'retry_wait')
      AND NOT d.enabled AND t.retry_horizon_at <= clock.now
    ORDER BY t.retry_horizon_at
    LIMIT $3
    FOR UPDATE OF t SKIP LOCKED
),
failed AS (
    UPDATE tasks t
    SET state = 'failed', failure_reason = 'destination_disabled', finalized_at = clock.now,
        updated_at = clock.now
    FROM doomed, clock
    WHERE t.id = doomed.id AND t.state IN ('pending', 'retry_wait')
    RETURNING t.id
)
SELECT (SELECT count(*) FROM failed) + (SELECT count(*) FROM reclaimed WHERE expired)
    AS failed
"#;

#[derive(QueryableByName)]
struct FailedCount {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    failed: i64,
}
