//! The text of `status`'s PostgreSQL counts, in one place, so that the test
//! that checks their plans (EXPLAIN on a million tasks) reads the very
//! statements the store runs.
//!
//! Nothing here reads every row of `tasks`: the schema's CHECKs tie the
//! states to columns the indexes hold (a row has `finalized_at` exactly
//! when it is delivered or failed, and `failure_reason` exactly when it
//! failed), so the ended rows are counted from the indexes alone, and the
//! live rows, the ones a claim may still take, are read once.

/// The live tasks by region and destination (a region's, $2, or all when
/// NULL): how many are pending, leased and waiting for a retry, the oldest
/// a claim would take now (due, unleased, its destination enabled and not
/// paused, as the claim requires) in microseconds, and the expired leases.
/// $1 is the pinned clock, or NULL.
///
/// One pass over the rows whose `finalized_at` is unset, as the partial
/// index the claim reads (`tasks_live`) holds them; the region's counts and
/// the destinations with the most tasks waiting for a retry both come from
/// it. Ordered by retry waits (most first), then destination, so the top
/// of the list is the one the report shows.
pub const STATUS_LIVE: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT t.region, t.destination_id AS destination,
       count(*) FILTER (WHERE t.state = 'pending') AS pending,
       count(*) FILTER (WHERE t.state = 'leased') AS leased,
       count(*) FILTER (WHERE t.state = 'retry_wait') AS retry_wait,
       (EXTRACT(EPOCH FROM clock.now - min(GREATEST(t.available_at, t.not_before)) FILTER (
            WHERE t.state IN ('pending', 'retry_wait')
              AND GREATEST(t.available_at, t.not_before) <= clock.now
              AND d.enabled
              AND (d.paused_until IS NULL OR d.paused_until <= clock.now))) * 1e6)::int8
           AS oldest_micros,
       count(*) FILTER (WHERE t.state = 'leased' AND t.lease_expires_at <= clock.now)
           AS expired
FROM tasks t JOIN destinations d ON d.id = t.destination_id, clock
WHERE t.finalized_at IS NULL AND ($2::text IS NULL OR t.region = $2)
GROUP BY t.region, t.destination_id, clock.now
ORDER BY retry_wait DESC, t.destination_id
"#;

/// The ended tasks by region (a region's, $1, or all when NULL): every row
/// with `finalized_at` (an index-only scan of `tasks_finalized`) and every
/// row with a `failure_reason` (of the partial `tasks_failed`); delivered
/// is the one minus the other.
pub const STATUS_ENDED: &str = r#"
WITH ended AS (
    SELECT t.region, count(*) AS n
    FROM tasks t
    WHERE t.finalized_at IS NOT NULL AND ($1::text IS NULL OR t.region = $1)
    GROUP BY t.region
),
failed AS (
    SELECT t.region, count(*) AS n
    FROM tasks t
    WHERE t.failure_reason IS NOT NULL AND ($1::text IS NULL OR t.region = $1)
    GROUP BY t.region
)
SELECT ended.region, ended.n - coalesce(failed.n, 0) AS delivered,
       coalesce(failed.n, 0) AS failed
FROM ended LEFT JOIN failed ON failed.region = ended.region
"#;

/// The destinations with the most 429 answers in the last hour (at most
/// $3), in a region ($2) or all; $1 is the pinned clock, or NULL. The walk
/// reads `attempts_rate_limited`.
pub const TOP_RATE_LIMITED: &str = r#"
SELECT t.destination_id AS destination, count(*) AS n
FROM attempts a JOIN tasks t ON t.id = a.task_id
WHERE a.http_status = 429 AND a.recorded_at > coalesce($1, now()) - interval '1 hour'
  AND ($2::text IS NULL OR t.region = $2)
GROUP BY t.destination_id
ORDER BY n DESC, t.destination_id
LIMIT $3
"#;

/// The regions asked for: $2, or every region a destination is in (a
/// task's region is its destination's), so that the windows below walk
/// `tasks_finalized` (region, finalized_at) one region at a time, for all
/// regions too.
macro_rules! regions {
    () => {
        "(SELECT DISTINCT d.region FROM destinations d \
           WHERE ($2::text IS NULL OR d.region = $2)) r"
    };
}

/// The tasks that failed in the last day by reason, in a region ($2) or
/// all; $1 is the pinned clock, or NULL.
pub const FAILURES: &str = concat!(
    r#"
SELECT t.failure_reason AS reason, count(*) AS n
FROM "#,
    regions!(),
    r#" JOIN tasks t ON t.region = r.region
WHERE t.state = 'failed' AND t.finalized_at > coalesce($1, now()) - interval '1 day'
GROUP BY t.failure_reason
ORDER BY n DESC, t.failure_reason
"#
);

/// Deadline-to-delivery percentiles (microseconds) of the tasks delivered
/// in the last hour, in a region ($2) or all; $1 is the pinned clock, or
/// NULL.
pub const LATENCY: &str = concat!(
    r#"
SELECT count(*) AS n,
       (EXTRACT(EPOCH FROM percentile_disc(0.5) WITHIN GROUP (ORDER BY t.delivered_at - t.not_before)) * 1e6)::int8 AS p50,
       (EXTRACT(EPOCH FROM percentile_disc(0.99) WITHIN GROUP (ORDER BY t.delivered_at - t.not_before)) * 1e6)::int8 AS p99
FROM "#,
    regions!(),
    r#" JOIN tasks t ON t.region = r.region
WHERE t.state = 'delivered' AND t.finalized_at > coalesce($1, now()) - interval '1 hour'
"#
);
