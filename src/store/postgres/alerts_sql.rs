//! The alert check's two walks on PostgreSQL, named for the test that
//! plans them on a million tasks (`tests/store/alert_plans.rs`).

/// Each destination's late tasks: one index descent per destination
/// (`task_queue_late_check`), at most `batch` rows each, with their tasks.
/// `$1`–`$4`: each scan's destination, cursor (instant, task) and cutoff;
/// `$5`: the batch.
pub const LATE_SQL: &str = r#"
SELECT t.*
FROM unnest($1::text[], $2::timestamptz[], $3::uuid[], $4::timestamptz[])
         AS s(destination_id, after_at, after_id, cutoff)
CROSS JOIN LATERAL (
    SELECT q.task_id, q.not_before FROM task_queue q
    WHERE q.destination_id = s.destination_id
      AND (q.not_before, q.task_id) > (s.after_at, s.after_id)
      AND q.not_before <= s.cutoff
    ORDER BY q.not_before, q.task_id
    LIMIT $5) l
JOIN tasks t ON t.id = l.task_id
ORDER BY t.destination_id, l.not_before, l.task_id
"#;

/// The region's tasks whose horizon comes within the warning, after the
/// cursor (`tasks_horizon_check`). `$1` region, `$2`/`$3` the cursor,
/// `$4` the last horizon read, `$5` the batch.
pub const HORIZON_SQL: &str = r#"
SELECT * FROM tasks
WHERE region = $1 AND (retry_horizon_at, id) > ($2, $3) AND retry_horizon_at <= $4
ORDER BY retry_horizon_at, id
LIMIT $5
"#;
