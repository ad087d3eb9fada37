//! Reconciliation: the checks that find a stuck partition or a reminder
//! that never reached the schedule. The schedule is the ledger of what
//! must happen; this pass compares it with the clock and, when given, with
//! the source of truth's own list.

use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::tables::rows::TaskRow;
use crate::domain::{
    Finding, LedgerEntry, ReconcileReport, ReconcileRequest, ReminderId, ReportedTask, Task,
    TenantId,
};
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

/// Every finding binds: $1 now, $2 region (NULL for all), $3 the
/// threshold in milliseconds, $4 the list limit.
const EXPIRED_LEASES_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT t.*, count(*) OVER () AS total
FROM task_queue live JOIN tasks t ON t.id = live.task_id, clock
WHERE ($2::text IS NULL OR live.region = $2)
  AND t.finalized_at IS NULL AND t.state = 'leased' AND t.lease_expires_at <= clock.now
ORDER BY t.lease_expires_at
LIMIT $4
"#;

const OLD_ELIGIBLE_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT t.*, count(*) OVER () AS total
FROM task_queue live JOIN tasks t ON t.id = live.task_id, clock
WHERE ($2::text IS NULL OR live.region = $2)
  AND t.finalized_at IS NULL AND t.state IN ('pending', 'retry_wait')
  AND GREATEST(t.available_at, t.not_before) <= clock.now - $3 * interval '1 millisecond'
ORDER BY GREATEST(t.available_at, t.not_before)
LIMIT $4
"#;

const PAST_HORIZON_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT t.*, count(*) OVER () AS total
FROM task_queue live JOIN tasks t ON t.id = live.task_id, clock
WHERE ($2::text IS NULL OR live.region = $2)
  AND t.finalized_at IS NULL AND t.state IN ('pending', 'leased', 'retry_wait')
  AND t.retry_horizon_at < clock.now
ORDER BY t.retry_horizon_at
LIMIT $4
"#;

const TERMINAL_SQL: &str = r#"
SELECT CASE WHEN t.state = 'cancelled' THEN 'cancelled'
            ELSE coalesce(t.failure_reason, 'delivered') END AS outcome,
       count(*) AS total
FROM tasks t
WHERE ($1::text IS NULL OR t.region = $1) AND t.finalized_at IS NOT NULL
  AND t.state IN ('delivered', 'failed', 'cancelled')
GROUP BY 1
ORDER BY 1
"#;

/// Hands expired leases back: due at once, with the lost attempt logged as
/// `abandoned`. SKIP LOCKED leaves rows a claimer is taking right now.
const RECLAIM_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now),
expired AS (
    SELECT t.id, t.lease_token, t.lease_owner, t.attempt_count
    FROM task_queue live JOIN tasks t ON t.id = live.task_id, clock
    WHERE ($2::text IS NULL OR live.region = $2)
      AND t.finalized_at IS NULL AND t.state = 'leased' AND t.lease_expires_at <= clock.now
    FOR UPDATE OF t SKIP LOCKED
),
logged AS (
    INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, outcome, recorded_at)
    SELECT e.id, e.attempt_count, e.lease_token, e.lease_owner, 'abandoned', clock.now
    FROM expired e, clock
)
UPDATE tasks t
SET state = 'retry_wait', lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL,
    available_at = GREATEST(clock.now, t.not_before), updated_at = clock.now
FROM expired, clock
WHERE t.id = expired.id
"#;

const LEDGER_MISSING_SQL: &str = r#"
SELECT l.tenant_id, l.reminder_id, l.due
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS l(tenant_id, reminder_id, due)
WHERE NOT EXISTS (SELECT 1 FROM tasks t
                  WHERE t.tenant_id = l.tenant_id AND t.reminder_id = l.reminder_id)
ORDER BY l.due
"#;

const LEDGER_UNKNOWN_SQL: &str = r#"
SELECT t.*, count(*) OVER () AS total
FROM tasks t
WHERE ($4::text IS NULL OR t.region = $4)
  AND t.not_before BETWEEN (SELECT min(d) FROM unnest($3::timestamptz[]) d)
                       AND (SELECT max(d) FROM unnest($3::timestamptz[]) d)
  AND NOT EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[]) AS l(tenant_id, reminder_id)
                  WHERE l.tenant_id = t.tenant_id AND l.reminder_id = t.reminder_id)
ORDER BY t.not_before
LIMIT $5
"#;

#[derive(QueryableByName)]
struct FoundRow {
    #[diesel(embed)]
    task: TaskRow,
    #[diesel(sql_type = BigInt)]
    total: i64,
}

#[derive(QueryableByName)]
struct TerminalRow {
    #[diesel(sql_type = Text)]
    outcome: String,
    #[diesel(sql_type = BigInt)]
    total: i64,
}

#[derive(QueryableByName)]
struct LedgerRow {
    #[diesel(sql_type = Text)]
    tenant_id: String,
    #[diesel(sql_type = Text)]
    reminder_id: String,
    #[diesel(sql_type = Timestamptz)]
    due: chrono::DateTime<chrono::Utc>,
}

fn finding(rows: Vec<FoundRow>) -> Result<Finding, StoreError> {
    // `first()` would resolve to diesel's query method here.
    let count = <[FoundRow]>::first(&rows).map_or(0, |r| r.total);
    let tasks = rows
        .into_iter()
        .map(|r| Task::try_from(r.task).map(summary))
        .collect::<Result<_, _>>()?;
    Ok(Finding { count, tasks })
}

fn summary(task: Task) -> ReportedTask {
    ReportedTask {
        id: task.id,
        tenant_id: task.tenant_id,
        reminder_id: task.reminder_id,
        destination_id: task.destination_id,
        region: task.region,
        state: task.state,
        not_before: task.not_before,
        available_at: task.available_at,
        lease_owner: task.lease_owner,
        lease_expires_at: task.lease_expires_at,
        attempt_count: task.attempt_count,
    }
}

async fn find(
    conn: &mut AsyncPgConnection,
    sql: &'static str,
    store: &PgStore,
    request: &ReconcileRequest,
) -> Result<Finding, StoreError> {
    let rows: Vec<FoundRow> = diesel::sql_query(sql)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Nullable<Text>, _>(request.region.as_ref().map(|r| r.as_str()))
        .bind::<BigInt, _>(request.older_than.num_milliseconds().max(0))
        .bind::<BigInt, _>(request.list_limit.max(0))
        .load(conn)
        .await?;
    finding(rows)
}

pub(in crate::store::postgres) async fn reconcile(
    store: &PgStore,
    request: &ReconcileRequest,
) -> Result<ReconcileReport, StoreError> {
    let mut conn = store.conn().await?;
    let region = request.region.as_ref().map(|r| r.as_str());
    let mut report = ReconcileReport {
        expired_leases: find(&mut conn, EXPIRED_LEASES_SQL, store, request).await?,
        ..ReconcileReport::default()
    };
    if request.reclaim {
        let reclaimed = diesel::sql_query(RECLAIM_SQL)
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .bind::<Nullable<Text>, _>(region)
            .execute(&mut conn)
            .await?;
        report.reclaimed = i64::try_from(reclaimed).unwrap_or(i64::MAX);
    }
    report.old_eligible = find(&mut conn, OLD_ELIGIBLE_SQL, store, request).await?;
    report.past_horizon = find(&mut conn, PAST_HORIZON_SQL, store, request).await?;
    report.terminal = diesel::sql_query(TERMINAL_SQL)
        .bind::<Nullable<Text>, _>(region)
        .load::<TerminalRow>(&mut conn)
        .await?
        .into_iter()
        .map(|r| (r.outcome, r.total))
        .collect();

    if let Some(ledger) = request.ledger.as_ref().filter(|l| !l.is_empty()) {
        let tenants: Vec<&str> = ledger.iter().map(|e| e.tenant_id.as_str()).collect();
        let reminders: Vec<&str> = ledger.iter().map(|e| e.reminder_id.as_str()).collect();
        let dues: Vec<_> = ledger.iter().map(|e| e.due).collect();
        report.missing_from_schedule = diesel::sql_query(LEDGER_MISSING_SQL)
            .bind::<Array<Text>, _>(&tenants)
            .bind::<Array<Text>, _>(&reminders)
            .bind::<Array<Timestamptz>, _>(&dues)
            .load::<LedgerRow>(&mut conn)
            .await?
            .into_iter()
            .map(|r| {
                Ok(LedgerEntry {
                    tenant_id: TenantId::new(&r.tenant_id)?,
                    reminder_id: ReminderId::new(&r.reminder_id)?,
                    due: r.due,
                })
            })
            .collect::<Result<_, crate::domain::InvalidInput>>()?;
        let rows: Vec<FoundRow> = diesel::sql_query(LEDGER_UNKNOWN_SQL)
            .bind::<Array<Text>, _>(&tenants)
            .bind::<Array<Text>, _>(&reminders)
            .bind::<Array<Timestamptz>, _>(&dues)
            .bind::<Nullable<Text>, _>(region)
            .bind::<BigInt, _>(request.list_limit.max(0))
            .load(&mut conn)
            .await?;
        report.unknown_to_ledger = finding(rows)?;
    }
    Ok(report)
}
