//! The alert check's two reads on PostgreSQL, named for the test that
//! plans them on a million tasks (`tests/store/alert_plans.rs`).

/// Each destination's live tasks not yet announced late: one index descent
/// per destination (`task_queue_late`, from `(destination, false)`), at
/// most `batch` rows each, with their tasks. `$1`/`$2`: each scan's
/// destination and cutoff; `$3`: the batch.
pub const LATE_SQL: &str = r#"
SELECT t.*
FROM unnest($1::text[], $2::timestamptz[]) AS s(destination_id, cutoff)
CROSS JOIN LATERAL (
    SELECT q.task_id, q.not_before FROM task_queue q
    WHERE q.destination_id = s.destination_id
      AND q.late_seen = false
      AND q.not_before <= s.cutoff
    ORDER BY q.not_before, q.task_id
    LIMIT $3) l
JOIN tasks t ON t.id = l.task_id
ORDER BY t.destination_id, l.not_before, l.task_id
"#;

/// The region's live tasks whose horizon comes within the warning and was
/// not yet announced (`task_queue_horizon_unseen`). `$1` region, `$2` the
/// last horizon read, `$3` the batch.
pub const HORIZON_SQL: &str = r#"
SELECT t.*
FROM (SELECT q.task_id, q.retry_horizon_at FROM task_queue q
      WHERE q.region = $1 AND NOT q.horizon_seen AND q.retry_horizon_at <= $2
      ORDER BY q.retry_horizon_at, q.task_id
      LIMIT $3) h
JOIN tasks t ON t.id = h.task_id
ORDER BY h.retry_horizon_at, h.task_id
"#;

/// Marks the tasks announced late (`$1`, each with the deadline `$2` it
/// was announced for): a row whose deadline moved since the check read it
/// (a reschedule committed in between, which cleared the mark) is left
/// unmarked, to be announced for its new one. Each a probe of the queue's
/// primary key.
pub const MARK_LATE_SQL: &str = r#"
UPDATE task_queue q SET late_seen = true
FROM unnest($1::uuid[], $2::timestamptz[]) AS s(task_id, not_before)
WHERE q.task_id = s.task_id AND q.not_before = s.not_before
"#;

/// As [`MARK_LATE_SQL`], for the tasks whose horizon (`$2`) was announced.
pub const MARK_HORIZON_SQL: &str = r#"
UPDATE task_queue q SET horizon_seen = true
FROM unnest($1::uuid[], $2::timestamptz[]) AS s(task_id, retry_horizon_at)
WHERE q.task_id = s.task_id AND q.retry_horizon_at = s.retry_horizon_at
"#;
