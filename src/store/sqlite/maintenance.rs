//! Reconciliation and retention on SQLite.
//!
//! Reconciliation reads the rows it reports on (the region's, or every
//! region's when a ledger is compared) and computes its findings with
//! `findings`, as the model does: a full read, which suits the embedded
//! store's size (retention keeps the table to its last weeks).

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::attempt_rows;
use super::rows::{self, micros, TaskRow, TASK_COLUMNS};
use crate::domain::{ReconcileReport, ReconcileRequest, Region, Task};
use crate::store::contract::StoreError;
use crate::store::{rules::findings, rules::lapsed};

pub(super) fn reconcile(
    conn: &mut SqliteConnection,
    request: &ReconcileRequest,
    now: DateTime<Utc>,
) -> Result<ReconcileReport, StoreError> {
    let scope = if request.ledger.as_ref().is_some_and(|l| !l.is_empty()) {
        None
    } else {
        request.region
    };
    let found: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE ? IS NULL OR region = ? ORDER BY seq"
    ))
    .bind::<Nullable<Text>, _>(scope.map(|r| r.to_string()))
    .bind::<Nullable<Text>, _>(scope.map(|r| r.to_string()))
    .load(conn)?;
    let mut tasks: Vec<Task> = rows::tasks(found)?;
    if !request.reclaim {
        return Ok(findings::findings(&tasks, request, now));
    }
    // As PostgreSQL: the expired leases as found, then the hand-back, then
    // everything else as it stands after it.
    let expired_leases = findings::findings(&tasks, request, now).expired_leases;
    let mut reclaimed = 0;
    for task in tasks
        .iter_mut()
        .filter(|t| request.region.is_none_or(|r| t.region == r) && lapsed::lease_expired(t, now))
    {
        let lost = lapsed::reclaim(task, now);
        rows::write_task(conn, task)?;
        attempt_rows::insert_attempt(conn, &lost)?;
        reclaimed += 1;
    }
    Ok(ReconcileReport {
        expired_leases,
        reclaimed,
        ..findings::findings(&tasks, request, now)
    })
}

/// The regions that have tasks, in order.
pub(super) fn regions(conn: &mut SqliteConnection) -> Result<Vec<Region>, StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Name {
        #[diesel(sql_type = Text)]
        region: String,
    }
    let names: Vec<Name> =
        diesel::sql_query("SELECT DISTINCT region FROM tasks ORDER BY region").load(conn)?;
    names
        .iter()
        .map(|n| crate::store::rules::columns::region("tasks.region", &n.region))
        .collect()
}

/// Deletes one batch of the region's oldest tasks that ended before
/// `cutoff`, with their attempts and payloads. Returns the counts of tasks,
/// attempts and payloads deleted.
pub(super) fn prune_batch(
    conn: &mut SqliteConnection,
    region: Region,
    cutoff: DateTime<Utc>,
    batch_size: u32,
) -> Result<(u64, u64, u64), StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Doomed {
        #[diesel(sql_type = Text)]
        id: String,
        #[diesel(sql_type = Text)]
        payload_ref: String,
    }
    let doomed: Vec<Doomed> = diesel::sql_query(
        "SELECT id, payload_ref FROM tasks \
         WHERE state IN ('delivered', 'failed', 'cancelled') AND finalized_at < ? \
           AND region = ? \
         ORDER BY finalized_at, seq LIMIT ?",
    )
    .bind::<BigInt, _>(micros(cutoff))
    .bind::<Text, _>(region.as_str())
    .bind::<BigInt, _>(i64::from(batch_size))
    .load(conn)?;
    let (mut attempts, mut payloads) = (0, 0);
    for one in &doomed {
        attempts += diesel::sql_query("DELETE FROM attempts WHERE task_id = ?")
            .bind::<Text, _>(&one.id)
            .execute(conn)? as u64;
        diesel::sql_query("DELETE FROM tasks WHERE id = ?")
            .bind::<Text, _>(&one.id)
            .execute(conn)?;
        payloads += diesel::sql_query("DELETE FROM payloads WHERE payload_ref = ?")
            .bind::<Text, _>(&one.payload_ref)
            .execute(conn)? as u64;
    }
    Ok((doomed.len() as u64, attempts, payloads))
}

/// Settles up to `limit` tasks of the region whose destination is disabled,
/// by `lapsed::settle_disabled`: expired leases handed back, and
/// unleased rows past their horizon failed. Answers how many failed.
pub(super) fn fail_disabled_past_horizon(
    conn: &mut SqliteConnection,
    region: Region,
    limit: u32,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let rows: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {} FROM tasks t JOIN destinations d ON d.id = t.destination_id \
         WHERE t.region = ?1 AND d.enabled = 0 \
           AND ((t.state IN ('pending', 'retry_wait') AND t.retry_horizon_at <= ?2) \
                OR (t.state = 'leased' AND t.lease_expires_at <= ?2)) \
         ORDER BY t.retry_horizon_at, t.seq LIMIT ?3",
        TASK_COLUMNS
            .split(", ")
            .map(|c| format!("t.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
    .bind::<Text, _>(region.as_str())
    .bind::<BigInt, _>(micros(now))
    .bind::<BigInt, _>(i64::from(limit))
    .load(conn)?;
    let mut failed = 0;
    for row in rows {
        let mut task = Task::try_from(row)?;
        let settled = lapsed::settle_disabled(&mut task, now);
        if let Some(lost) = &settled.abandoned {
            attempt_rows::insert_attempt(conn, lost)?;
        }
        if settled.abandoned.is_some() || settled.failed {
            rows::write_task(conn, &task)?;
        }
        failed += u64::from(settled.failed);
    }
    Ok(failed)
}
