//! Retention: deleting terminal tasks, with their attempts and payloads,
//! once they are older than the age an operator keeps, so the `tasks`
//! table holds recent history and live work rather than years of it.
//!
//! Deletion goes in small batches, each one statement and so one short
//! transaction: row locks are held for milliseconds, and a claim or a
//! finish never waits behind a long purge.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::super::tables::schema::destinations;
use crate::domain::{PruneReport, PruneRequest, Region};
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;
use crate::store::rules::requests;

/// The run's cutoff, fixed once: $1 now, $2 the age kept in milliseconds.
/// Rows that end during the run are younger than it, so the run ends.
const CUTOFF_SQL: &str = r#"
SELECT coalesce($1, now()) - $2 * interval '1 millisecond' AS cutoff
"#;

/// One batch: $1 the cutoff, $2 the region, $3 the batch size.
///
/// `ends` reads the region's oldest end rows before the cutoff (the log
/// `task_ends`, by region and time), and `doomed` the tasks they name that
/// are still delivered or failed and ended before the cutoff, so a
/// pending, leased or waiting row is never touched. FOR UPDATE re-checks
/// the state of a row changed since the statement began (a replay makes a
/// failed row pending again), and SKIP LOCKED passes over a row another
/// transaction holds, such as a replay in progress or a late fenced finish
/// logging against the task. An end row goes with its task, or once it no
/// longer matches its task's end (the task was replayed, or is gone); one
/// whose task was passed over stays for the next run.
///
/// The deletes go attempts, tasks, then payloads (tasks reference payloads;
/// PostgreSQL checks the key at the end of the statement, when all three
/// deletes are done). A payload belongs to one task only: its reference is
/// a fresh UUID written with that task.
const BATCH_SQL: &str = r#"
WITH ends AS MATERIALIZED (
    SELECT e.ctid AS end_row, e.task_id, e.finalized_at
    FROM task_ends e
    WHERE e.region = $2 AND e.finalized_at < $1
    ORDER BY e.finalized_at
    LIMIT $3
),
doomed AS (
    SELECT t.id
    FROM ends JOIN tasks t ON t.id = ends.task_id
    WHERE t.finalized_at IS NOT NULL AND t.state IN ('delivered', 'failed', 'cancelled')
      AND t.finalized_at < $1
    FOR UPDATE OF t SKIP LOCKED
),
ends_gone AS (
    DELETE FROM task_ends e USING ends
    WHERE e.ctid = ends.end_row
      AND (ends.task_id IN (SELECT id FROM doomed)
           OR NOT EXISTS (SELECT 1 FROM tasks t
                          WHERE t.id = ends.task_id AND t.finalized_at = ends.finalized_at))
    RETURNING e.task_id
),
attempts_gone AS (
    DELETE FROM attempts a USING doomed WHERE a.task_id = doomed.id
    RETURNING a.id
),
tasks_gone AS (
    DELETE FROM tasks t USING doomed WHERE t.id = doomed.id
    RETURNING t.payload_ref
),
payloads_gone AS (
    DELETE FROM payloads p USING tasks_gone WHERE p.payload_ref = tasks_gone.payload_ref
    RETURNING p.payload_ref
)
SELECT (SELECT count(*) FROM tasks_gone) AS tasks,
       (SELECT count(*) FROM attempts_gone) AS attempts,
       (SELECT count(*) FROM payloads_gone) AS payloads,
       (SELECT count(*) FROM ends) AS looked,
       (SELECT count(*) FROM ends_gone) AS ends
"#;

#[derive(QueryableByName)]
struct Cutoff {
    #[diesel(sql_type = Timestamptz)]
    cutoff: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct Batch {
    #[diesel(sql_type = BigInt)]
    tasks: i64,
    #[diesel(sql_type = BigInt)]
    attempts: i64,
    #[diesel(sql_type = BigInt)]
    payloads: i64,
    /// End rows read, and deleted.
    #[diesel(sql_type = BigInt)]
    looked: i64,
    #[diesel(sql_type = BigInt)]
    ends: i64,
}

/// Prunes batch after batch, region by region, until a batch reads fewer
/// end rows than its size or deletes none (every row it read was locked by
/// others: they are left for the next run).
pub(in crate::store::postgres) async fn prune(
    store: &PgStore,
    request: &PruneRequest,
) -> Result<PruneReport, StoreError> {
    requests::check_prune(request)?;
    let cutoff = {
        let mut conn = store.conn().await?;
        diesel::sql_query(CUTOFF_SQL)
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .bind::<BigInt, _>(request.older_than.num_milliseconds())
            .get_result::<Cutoff>(&mut conn)
            .await?
            .cutoff
    };
    let regions = match request.region {
        Some(region) => vec![region],
        // Every region that has destinations, and so may have tasks.
        None => {
            let mut conn = store.conn().await?;
            let names: Vec<String> = destinations::table
                .select(destinations::region)
                .distinct()
                .load(&mut conn)
                .await?;
            names
                .iter()
                .map(|name| super::super::tables::rows::region("destinations.region", name))
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    let size = i32::try_from(request.batch_size).unwrap_or(i32::MAX);
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    let mut report = PruneReport::default();
    for region in regions {
        loop {
            // A connection per batch: between batches it is free for others.
            let mut conn = store.conn().await?;
            let batch: Batch = diesel::sql_query(BATCH_SQL)
                .bind::<Timestamptz, _>(cutoff)
                .bind::<Text, _>(region.as_str())
                .bind::<Integer, _>(size)
                .get_result(&mut conn)
                .await?;
            report.add_batch(
                count(batch.tasks),
                count(batch.attempts),
                count(batch.payloads),
            );
            if batch.looked < i64::from(size) || batch.ends == 0 {
                break;
            }
        }
        prune_lines(store, region, size).await?;
    }
    Ok(report)
}

/// The ordering lines of a region's destinations with no task live (one
/// row per line a claim took a task of: with a key per event, one per
/// event), at most `$2` a transaction, rows a claim holds passed over. A
/// line's row made anew later never carries a version a claim saw on the
/// old one (`ordering_line_versions`), so pruning one cannot let two claims
/// take its line. `$1` the region.
const PRUNE_LINES_SQL: &str = "DELETE FROM ordering_lines l USING ( \
        SELECT o.destination_id, o.ordering_key FROM ordering_lines o \
        JOIN destinations d ON d.id = o.destination_id AND d.region = $1 \
        WHERE NOT EXISTS (SELECT 1 FROM task_queue q \
                          WHERE q.destination_id = o.destination_id \
                            AND q.ordering_key = o.ordering_key) \
        LIMIT $2 FOR UPDATE OF o SKIP LOCKED) idle \
    WHERE l.destination_id = idle.destination_id AND l.ordering_key = idle.ordering_key";

async fn prune_lines(store: &PgStore, region: Region, size: i32) -> Result<(), StoreError> {
    loop {
        let mut conn = store.conn().await?;
        let deleted = diesel::sql_query(PRUNE_LINES_SQL)
            .bind::<Text, _>(region.as_str())
            .bind::<Integer, _>(size)
            .execute(&mut conn)
            .await?;
        if deleted < usize::try_from(size).unwrap_or(usize::MAX) {
            return Ok(());
        }
    }
}
