//! The text of `status`'s PostgreSQL counts, in one place, so that the test
//! that checks their plans (EXPLAIN on a million tasks) reads the very
//! statements the store runs.
//!
//! Nothing here reads every row of `tasks`: the live tasks are counted
//! from `task_queue`, with their task rows read only where due or in
//! flight, and the ended ones from the indexes alone (the schema's CHECKs
//! tie the states to columns: a row has `finalized_at` exactly when it is
//! delivered or failed, and `failure_reason` exactly when it failed).

/// The live tasks by region and destination (a region's, $2, or all when
/// NULL): how many are pending, leased and waiting for a retry, the oldest
/// a claim would take now (due, unleased, its destination enabled and not
/// paused, as the claim requires) in microseconds, and the expired leases.
/// $1 is the pinned clock, or NULL.
///
/// As `status`'s gauges count them: how many wait, and whether for a
/// retry, from `task_queue` alone; the leases, the expired ones and the
/// oldest eligible task from the task rows of those due or in flight (a
/// leased task keeps the `available_at` it was claimed at, at or before
/// now), the leased ones taken off the count their queue mark puts them
/// in. The region's counts and the destinations with the most tasks
/// waiting for a retry both come from it. Ordered by retry waits (most
/// first), then destination, so the top of the list is the one the
/// report shows.
pub const STATUS_LIVE: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now, '-infinity'::timestamptz AS never),
waiting AS (
    SELECT live.region, live.destination_id,
           count(*) FILTER (WHERE NOT live.retrying) AS fresh,
           count(*) FILTER (WHERE live.retrying) AS retrying
    FROM task_queue live
    WHERE ($2::text IS NULL OR live.region = $2)
    GROUP BY live.region, live.destination_id
),
due AS (
    SELECT live.region, live.destination_id,
           count(*) FILTER (WHERE t.state = 'leased') AS leased,
           count(*) FILTER (WHERE t.state = 'leased' AND live.retrying) AS leased_retrying,
           count(*) FILTER (WHERE t.state = 'leased'
                              AND t.lease_expires_at <= (SELECT now FROM clock)) AS expired,
           min(t.available_at) FILTER (WHERE t.state IN ('pending', 'retry_wait')) AS oldest
    FROM task_queue live JOIN tasks t ON t.id = live.task_id
    -- The lower bound excludes nothing; with it the planner sees a range,
    -- which it estimates as narrow (as it is next to the rows due later),
    -- and reads the task rows one by one.
    WHERE ($2::text IS NULL OR live.region = $2)
      AND live.available_at <= (SELECT now FROM clock)
      AND live.available_at >= (SELECT never FROM clock)
    GROUP BY live.region, live.destination_id
)
SELECT w.region, w.destination_id AS destination,
       w.fresh - coalesce(due.leased - due.leased_retrying, 0) AS pending,
       coalesce(due.leased, 0) AS leased,
       w.retrying - coalesce(due.leased_retrying, 0) AS retry_wait,
       CASE WHEN d.enabled AND (d.paused_until IS NULL OR d.paused_until <= clock.now)
            THEN (EXTRACT(EPOCH FROM clock.now - due.oldest) * 1e6)::int8 END AS oldest_micros,
       coalesce(due.expired, 0) AS expired
FROM waiting w
JOIN destinations d ON d.id = w.destination_id
LEFT JOIN due ON due.region = w.region AND due.destination_id = w.destination_id
CROSS JOIN clock
ORDER BY retry_wait DESC, w.destination_id
"#;

/// The ended tasks by region (a region's, $1, or all when NULL): every
/// task (an index-only scan of `tasks_by_not_before`) less those not yet
/// ended (of `task_queue_due`) is every ended one, every row with a
/// `failure_reason` (of the partial `tasks_failed`) is a failed one, every
/// cancelled one has a `cancelled_at` (of the partial `tasks_cancelled`,
/// which also holds the few delivered after a cancel came too late);
/// delivered is the rest. No index of `tasks` keys the time a task ended
/// (a finish would then write a new index entry), so counting ended rows
/// directly would read the table.
pub const STATUS_ENDED: &str = r#"
WITH everything AS (
    SELECT t.region, count(*) AS n
    FROM tasks t
    WHERE ($1::text IS NULL OR t.region = $1)
    GROUP BY t.region
),
live AS (
    SELECT live.region, count(*) AS n
    FROM task_queue live
    WHERE ($1::text IS NULL OR live.region = $1)
    GROUP BY live.region
),
failed AS (
    SELECT t.region, count(*) AS n
    FROM tasks t
    WHERE t.failure_reason IS NOT NULL AND ($1::text IS NULL OR t.region = $1)
    GROUP BY t.region
),
cancelled AS (
    SELECT t.region, count(*) AS n
    FROM tasks t
    WHERE t.cancelled_at IS NOT NULL AND t.state = 'cancelled'
      AND ($1::text IS NULL OR t.region = $1)
    GROUP BY t.region
)
SELECT everything.region,
       everything.n - coalesce(live.n, 0) - coalesce(failed.n, 0) - coalesce(cancelled.n, 0)
           AS delivered,
       coalesce(failed.n, 0) AS failed,
       coalesce(cancelled.n, 0) AS cancelled
FROM everything
LEFT JOIN live ON live.region = everything.region
LEFT JOIN failed ON failed.region = everything.region
LEFT JOIN cancelled ON cancelled.region = everything.region
WHERE everything.n > coalesce(live.n, 0)
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
/// `task_ends_by_time` (region, finalized_at) and `task_failures_by_time`
/// (region, failed_at) one region at a time, for all regions too.
macro_rules! regions {
    () => {
        "(SELECT DISTINCT d.region FROM destinations d \
           WHERE ($2::text IS NULL OR d.region = $2)) r"
    };
}

/// The tasks that failed in the last day by reason, in a region ($2) or
/// all; $1 is the pinned clock, or NULL. From the failure log
/// (`task_failures_by_time`, one region at a time): a failure replayed
/// since still counts.
pub const FAILURES: &str = concat!(
    r#"
SELECT f.failure_reason AS reason, count(*) AS n
FROM "#,
    regions!(),
    r#" JOIN task_failures f ON f.region = r.region
WHERE f.failed_at > coalesce($1, now()) - interval '1 day' AND f.failed_at <= coalesce($1, now())
GROUP BY f.failure_reason
ORDER BY n DESC, f.failure_reason
"#
);

/// The same failures by destination: the $3 with the most.
pub const FAILURES_BY_DESTINATION: &str = concat!(
    r#"
SELECT f.destination_id AS destination, count(*) AS n
FROM "#,
    regions!(),
    r#" JOIN task_failures f ON f.region = r.region
WHERE f.failed_at > coalesce($1, now()) - interval '1 day' AND f.failed_at <= coalesce($1, now())
GROUP BY f.destination_id
ORDER BY n DESC, f.destination_id
LIMIT $3
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
    r#" JOIN task_ends e ON e.region = r.region"#,
    ended_task!(),
    r#"
WHERE e.finalized_at > coalesce($1, now()) - interval '1 hour' AND t.state = 'delivered'
"#
);
