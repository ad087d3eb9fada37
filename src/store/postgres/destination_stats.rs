//! Each destination's hours on PostgreSQL (`destination_stats`): the
//! finish statement's steps that add a batch to them (`count_hours!`,
//! which `finish_many` writes into `END_MANY_SQL`), the read the API and
//! the console make, and the Pruner's fold and delete.
//!
//! An hour may have a row per slot: a finish writes its connection's slot
//! (`pg_backend_pid() % 16`), so the finishes a process commits at once
//! on its connections (and other processes' finishes) do not queue on one
//! row, each holding it until its commit is flushed. A read adds an
//! hour's slots up; the Pruner folds an ended hour's slots into slot 0.

/// The steps of the finish statement (`finish_many::END_MANY_SQL`) that
/// add its batch to the destinations' hours, written after its last step.
/// They read `clock`, `buckets` (the bucket bounds, `domain::bucket_bounds_us`),
/// `moved` (each moved row with its destination, attempt number,
/// `not_before`, start, class and latency) and `healed` (the destinations
/// the batch locked).
macro_rules! count_hours {
    () => {
        r#"
-- The destination's hour (domain/destination_hour): each moved attempt
-- with an exchange, by class, its latency and, on a first attempt, its
-- lateness against `not_before`, each as the bucket of the shared bounds
-- that holds it (0 below the first bound).
counted AS (
    SELECT m.destination_id AS id, m.class,
           width_bucket(m.latency_us, buckets.bounds) AS latency,
           CASE WHEN m.attempt_count = 1 THEN
               width_bucket((extract(epoch FROM m.started_at - m.not_before)
                             * 1000000)::int8, buckets.bounds)
           END AS lateness
    FROM moved m, buckets
    WHERE m.class IS NOT NULL
),
tallied AS (
    SELECT id,
           count(*) FILTER (WHERE class = 0)::int4 AS succeeded,
           count(*) FILTER (WHERE class = 1)::int4 AS transport,
           count(*) FILTER (WHERE class = 2)::int4 AS timeout,
           count(*) FILTER (WHERE class = 3)::int4 AS client_error,
           count(*) FILTER (WHERE class = 4)::int4 AS rate_limited,
           count(*) FILTER (WHERE class = 5)::int4 AS server_error,
           count(*) FILTER (WHERE class = 6)::int4 AS other_status,
           array_agg(latency) FILTER (WHERE latency IS NOT NULL) AS latencies,
           array_agg(lateness) FILTER (WHERE lateness IS NOT NULL) AS latenesses
    FROM counted GROUP BY id
),
-- One row per destination for the whole batch, added to the hour's row of
-- this connection's slot. Written after the destinations above are locked
-- (the one-time filter reads `healed` first) and in id order, so finishers
-- meeting on a row wait for each other in the order they wait on
-- destinations, and never deadlock.
kept AS (
    INSERT INTO destination_stats AS s
        (destination_id, hour, slot, succeeded, transport, timeout, client_error,
         rate_limited, server_error, other_status, latency, lateness)
    SELECT t.id, date_trunc('hour', clock.now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
           (pg_backend_pid() % 16)::int2,
           t.succeeded, t.transport, t.timeout, t.client_error, t.rate_limited,
           t.server_error, t.other_status,
           destination_stats_add(NULL, t.latencies), destination_stats_add(NULL, t.latenesses)
    FROM tallied t, clock
    WHERE (SELECT count(*) FROM healed) >= 0
    ORDER BY t.id
    ON CONFLICT (destination_id, hour, slot) DO UPDATE SET
        succeeded = s.succeeded + excluded.succeeded,
        transport = s.transport + excluded.transport,
        timeout = s.timeout + excluded.timeout,
        client_error = s.client_error + excluded.client_error,
        rate_limited = s.rate_limited + excluded.rate_limited,
        server_error = s.server_error + excluded.server_error,
        other_status = s.other_status + excluded.other_status,
        latency = destination_stats_merge(s.latency, excluded.latency),
        lateness = destination_stats_merge(s.lateness, excluded.lateness)
)
"#
    };
}

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::tables::rows::corrupt;
use crate::domain::{
    hour_of, AttemptCounts, DestinationHour, DestinationId, Histogram, PruneRequest, Region,
    HISTOGRAM_BUCKETS,
};
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

/// $1 the destination, $2 the first hour, $3 the end (exclusive): one
/// range of the primary key, every slot of each hour.
const HOURS_SQL: &str = r#"
SELECT hour, succeeded, transport, timeout, client_error, rate_limited, server_error,
       other_status, latency, lateness
FROM destination_stats
WHERE destination_id = $1 AND hour >= $2 AND hour < $3
ORDER BY hour, slot
"#;

/// Folds the slots of every hour that has ended (before the hour that
/// holds $1, or the database's now) into slot 0, for the region $2 (NULL:
/// every region): the other slots' rows are deleted and added to slot 0's,
/// which is made when there is none. No finish writes an ended hour, so
/// this waits on none.
const FOLD_SQL: &str = r#"
WITH clock AS (
    SELECT date_trunc('hour', coalesce($1, now()) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
               AS current_hour
),
folded AS (
    DELETE FROM destination_stats s USING destinations d, clock
    WHERE d.id = s.destination_id AND ($2::text IS NULL OR d.region = $2)
      AND s.slot <> 0 AND s.hour < clock.current_hour
    RETURNING s.*
),
summed AS (
    SELECT destination_id, hour,
           sum(succeeded)::int4 AS succeeded, sum(transport)::int4 AS transport,
           sum(timeout)::int4 AS timeout, sum(client_error)::int4 AS client_error,
           sum(rate_limited)::int4 AS rate_limited, sum(server_error)::int4 AS server_error,
           sum(other_status)::int4 AS other_status,
           destination_stats_sum(latency) AS latency, destination_stats_sum(lateness) AS lateness
    FROM folded GROUP BY destination_id, hour
)
INSERT INTO destination_stats AS s
    (destination_id, hour, slot, succeeded, transport, timeout, client_error, rate_limited,
     server_error, other_status, latency, lateness)
SELECT destination_id, hour, 0, succeeded, transport, timeout, client_error, rate_limited,
       server_error, other_status, latency, lateness
FROM summed
ORDER BY destination_id, hour
ON CONFLICT (destination_id, hour, slot) DO UPDATE SET
    succeeded = s.succeeded + excluded.succeeded,
    transport = s.transport + excluded.transport,
    timeout = s.timeout + excluded.timeout,
    client_error = s.client_error + excluded.client_error,
    rate_limited = s.rate_limited + excluded.rate_limited,
    server_error = s.server_error + excluded.server_error,
    other_status = s.other_status + excluded.other_status,
    latency = destination_stats_merge(s.latency, excluded.latency),
    lateness = destination_stats_merge(s.lateness, excluded.lateness)
"#;

/// One batch of the prune, after the fold: $1 now (NULL: the database's),
/// $2 the age kept in milliseconds, $3 the region (NULL: every region), $4
/// the batch size. An hour goes once its end is older than the age: it
/// started more than the age and an hour ago. The hours of a destination
/// that no longer exists go with the age too, whichever region prunes.
const PRUNE_SQL: &str = r#"
WITH clock AS (
    SELECT coalesce($1, now()) - $2 * interval '1 millisecond' - interval '1 hour' AS cutoff
),
doomed AS (
    SELECT s.destination_id, s.hour, s.slot
    FROM destination_stats s
         LEFT JOIN destinations d ON d.id = s.destination_id, clock
    WHERE s.hour < clock.cutoff AND ($3::text IS NULL OR d.region = $3 OR d.id IS NULL)
    LIMIT $4
)
DELETE FROM destination_stats s USING doomed
WHERE s.destination_id = doomed.destination_id AND s.hour = doomed.hour
  AND s.slot = doomed.slot
"#;

/// The failure log's entries (`task_failures`) older than the age ($2 ms
/// before $1), of a region ($3) or all, at most $4 of them: the log is
/// kept as long as the hours.
const PRUNE_FAILURES_SQL: &str = r#"
DELETE FROM task_failures
WHERE ctid IN (
    SELECT ctid FROM task_failures
    WHERE failed_at < coalesce($1, now()) - $2 * interval '1 millisecond'
      AND ($3::text IS NULL OR region = $3)
    LIMIT $4
)
"#;

/// Most hours one prune statement deletes: each batch is a short
/// transaction of its own.
const PRUNE_BATCH: i32 = 5_000;

#[derive(QueryableByName)]
struct HourRow {
    #[diesel(sql_type = Timestamptz)]
    hour: DateTime<Utc>,
    #[diesel(sql_type = Integer)]
    succeeded: i32,
    #[diesel(sql_type = Integer)]
    transport: i32,
    #[diesel(sql_type = Integer)]
    timeout: i32,
    #[diesel(sql_type = Integer)]
    client_error: i32,
    #[diesel(sql_type = Integer)]
    rate_limited: i32,
    #[diesel(sql_type = Integer)]
    server_error: i32,
    #[diesel(sql_type = Integer)]
    other_status: i32,
    #[diesel(sql_type = Array<BigInt>)]
    latency: Vec<i64>,
    #[diesel(sql_type = Array<BigInt>)]
    lateness: Vec<i64>,
}

impl TryFrom<HourRow> for DestinationHour {
    type Error = StoreError;

    fn try_from(row: HourRow) -> Result<Self, StoreError> {
        let count = |n: i32| u64::try_from(n).unwrap_or(0);
        // The buckets that are not empty, each `bucket << 32 | count`.
        let histogram = |column: &'static str, packed: Vec<i64>| {
            let mut counts = [0u32; HISTOGRAM_BUCKETS];
            for entry in packed {
                let count = u32::try_from(entry & 0xffff_ffff).unwrap_or(0);
                let slot = usize::try_from(entry >> 32)
                    .ok()
                    .and_then(|bucket| counts.get_mut(bucket))
                    .ok_or_else(|| corrupt(column, format!("bucket of {entry}")))?;
                *slot = slot.saturating_add(count);
            }
            Histogram::from_counts(&counts).ok_or_else(|| corrupt(column, "bucket count"))
        };
        Ok(DestinationHour {
            hour: row.hour,
            counts: AttemptCounts {
                succeeded: count(row.succeeded),
                transport: count(row.transport),
                timeout: count(row.timeout),
                client_error: count(row.client_error),
                rate_limited: count(row.rate_limited),
                server_error: count(row.server_error),
                other_status: count(row.other_status),
            },
            latency: histogram("destination_stats.latency", row.latency)?,
            lateness: histogram("destination_stats.lateness", row.lateness)?,
        })
    }
}

impl PgStore {
    /// Runs `sql` (a delete of at most $4 rows older than $2 ms before
    /// $1, of region $3 or all) until a batch deletes fewer than a full
    /// one; answers how many it deleted. A connection per batch: between
    /// batches it is free for others.
    async fn prune_in_batches(
        &self,
        sql: &str,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        let mut deleted = 0u64;
        loop {
            let mut conn = self.conn().await?;
            let n = diesel::sql_query(sql)
                .bind::<Nullable<Timestamptz>, _>(self.clock.now_param())
                .bind::<BigInt, _>(older_than.num_milliseconds())
                .bind::<Nullable<Text>, _>(region.as_ref().map(Region::as_str))
                .bind::<Integer, _>(PRUNE_BATCH)
                .execute(&mut conn)
                .await?;
            deleted += n as u64;
            if n < PRUNE_BATCH as usize {
                return Ok(deleted);
            }
        }
    }
}

impl PgStore {
    pub(in crate::store) async fn read_destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        let mut conn = self.conn().await?;
        let rows: Vec<HourRow> = diesel::sql_query(HOURS_SQL)
            .bind::<Text, _>(id.as_str())
            .bind::<Timestamptz, _>(hour_of(since))
            .bind::<Timestamptz, _>(until)
            .load(&mut conn)
            .await?;
        let mut hours: Vec<DestinationHour> = Vec::new();
        for row in rows {
            let slot = DestinationHour::try_from(row)?;
            match hours.last_mut() {
                Some(hour) if hour.hour == slot.hour => hour.merge(&slot),
                _ => hours.push(slot),
            }
        }
        Ok(hours)
    }

    pub(in crate::store) async fn prune_stats(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        let older_than = older_than.min(Duration::days(PruneRequest::MAX_AGE_DAYS));
        {
            let mut conn = self.conn().await?;
            diesel::sql_query(FOLD_SQL)
                .bind::<Nullable<Timestamptz>, _>(self.clock.now_param())
                .bind::<Nullable<Text>, _>(region.as_ref().map(Region::as_str))
                .execute(&mut conn)
                .await?;
        }
        let hours = self.prune_in_batches(PRUNE_SQL, region, older_than).await?;
        // The failure log goes with the hours, and is not counted.
        self.prune_in_batches(PRUNE_FAILURES_SQL, region, older_than)
            .await?;
        Ok(hours)
    }
}
