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

/// Marks tasks announced late (`$1`) and tasks whose horizon was
/// announced (`$2`): each a probe of the queue's primary key.
pub const MARK_SQL: &str = r#"
UPDATE task_queue q
SET late_seen = q.late_seen OR q.task_id = ANY($1),
    horizon_seen = q.horizon_seen OR q.task_id = ANY($2)
WHERE q.task_id = ANY($1) OR q.task_id = ANY($2)
"#;
