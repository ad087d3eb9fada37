//! The text of the console's and the bulk replay's PostgreSQL queries, in
//! one place, so that the test that checks their plans (EXPLAIN on a
//! million tasks) reads the very statements the store runs.
//!
//! Every query names only what the indexes serve: the task search one
//! condition per field that is set (never `$n IS NULL OR …`, which a
//! generic plan cannot use an index for), and the last hour's counts
//! `task_ends_by_time` (deliveries), `task_failures_by_time` (failures)
//! and `attempts_rate_limited`.

use chrono::{DateTime, Utc};

use crate::domain::{Region, TaskId, TaskState};
use crate::store::contract::console::TaskFilter;

/// A value the task search binds, in the order its `$n` appear.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchParam {
    Text(String),
    Texts(Vec<String>),
    Uuid(uuid::Uuid),
    Time(DateTime<Utc>),
    BigInt(i64),
}

impl SearchParam {
    /// The value as an SQL literal, for `EXECUTE` of the prepared search.
    pub fn literal(&self) -> String {
        fn quoted(text: &str) -> String {
            format!("'{}'", text.replace('\'', "''"))
        }
        match self {
            SearchParam::Text(t) => quoted(t),
            SearchParam::Texts(ts) => format!(
                "ARRAY[{}]::text[]",
                ts.iter().map(|t| quoted(t)).collect::<Vec<_>>().join(", ")
            ),
            SearchParam::Uuid(u) => format!("'{u}'::uuid"),
            SearchParam::Time(t) => format!("'{}'::timestamptz", t.to_rfc3339()),
            SearchParam::BigInt(n) => n.to_string(),
        }
    }
}

/// The task search: the region's tasks matching `filter`, below `before`,
/// newest first, `limit` rows (the caller asks one more than a page to
/// learn whether another follows).
pub fn search_tasks(
    region: Region,
    filter: &TaskFilter,
    before: Option<TaskId>,
    limit: i64,
) -> (String, Vec<SearchParam>) {
    let mut sql = String::from("SELECT t.* FROM tasks t WHERE t.region = $1");
    let mut params = vec![SearchParam::Text(region.to_string())];
    let mut and = |condition: &str, param: Option<SearchParam>| match param {
        Some(param) => {
            params.push(param);
            sql.push_str(&format!(
                " AND {}",
                condition.replace('?', &format!("${}", params.len()))
            ));
        }
        None => sql.push_str(&format!(" AND {condition}")),
    };
    if let Some(id) = filter.id {
        and("t.id = ?", Some(SearchParam::Uuid(id.0)));
    }
    if let Some(tenant) = &filter.tenant {
        and(
            "t.tenant_id = ?",
            Some(SearchParam::Text(tenant.to_string())),
        );
    }
    if let Some(reminder) = &filter.reminder {
        and(
            "t.reminder_id = ?",
            Some(SearchParam::Text(reminder.to_string())),
        );
    }
    if let Some(destination) = &filter.destination {
        and(
            "t.destination_id = ?",
            Some(SearchParam::Text(destination.to_string())),
        );
    }
    if let Some(state) = filter.state {
        and(
            "t.state = ?::task_state",
            Some(SearchParam::Text(state.as_str().to_owned())),
        );
        // Said again in terms an index serves: a failed row has a reason
        // (the partial `tasks_failed`), a cancelled one a `cancelled_at`
        // (the partial `tasks_cancelled`), a row not yet ended is in the
        // queue; a delivered one is read newest first by id.
        match state {
            TaskState::Failed => and("t.failure_reason IS NOT NULL", None),
            TaskState::Cancelled => and("t.cancelled_at IS NOT NULL", None),
            TaskState::Delivered => and("t.finalized_at IS NOT NULL", None),
            _ => and(
                "t.id IN (SELECT live.task_id FROM task_queue live WHERE live.region = $1)",
                None,
            ),
        }
    }
    if let Some(from) = filter.from {
        and("t.not_before >= ?", Some(SearchParam::Time(from)));
    }
    if let Some(until) = filter.until {
        and("t.not_before < ?", Some(SearchParam::Time(until)));
    }
    if let Some(tenants) = &filter.only_tenants {
        and(
            "t.tenant_id = ANY(?::text[])",
            Some(SearchParam::Texts(
                tenants.iter().map(ToString::to_string).collect(),
            )),
        );
    }
    if let Some(before) = before {
        and("t.id < ?", Some(SearchParam::Uuid(before.0)));
    }
    params.push(SearchParam::BigInt(limit));
    sql.push_str(&format!(" ORDER BY t.id DESC LIMIT ${}", params.len()));
    (sql, params)
}

/// Each destination of a region ($2) with its learned quota and its
/// counts: in flight and due (from the live rows due by now,
/// `task_queue_due`), retrying (the rows waiting for a retry,
/// `task_queue_retrying`, less the leased ones among them, plus the leased
/// rows tried before their lease: a claim leaves a row's `retrying` as it
/// was), the deadline of its oldest
/// live task (two probes of `task_queue_late` per destination, one on
/// each side of the alert check's mark),
/// failed in the last hour (`task_failures_by_time`, replayed failures
/// included) and 429s in the last hour (`attempts_rate_limited`). $1 is the
/// pinned clock, or NULL.
pub const DESTINATION_SUMMARIES: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now),
live AS (
    SELECT t.destination_id,
           count(*) FILTER (WHERE t.state = 'leased') AS in_flight,
           count(*) FILTER (WHERE t.state IN ('pending', 'retry_wait')
                              AND GREATEST(t.available_at, t.not_before) <= clock.now) AS due_backlog,
           count(*) FILTER (WHERE t.state = 'leased' AND live.retrying) AS leased_marked,
           count(*) FILTER (WHERE t.state = 'leased'
                              AND t.attempt_count - 1 > t.attempts_before_replay) AS leased_retrying
    FROM task_queue live JOIN tasks t ON t.id = live.task_id, clock
    -- In flight or due: a leased row keeps the `available_at` it was
    -- claimed at, so both are at or before now and the rows due later are
    -- never read. The lower bound excludes nothing; with it the planner
    -- sees a range, which it estimates as narrow (as it is next to the
    -- rows due later), and probes the task rows one by one.
    WHERE live.region = $2 AND live.available_at <= clock.now
      AND live.available_at >= '-infinity'::timestamptz + (clock.now - clock.now)
    GROUP BY t.destination_id
),
retrying AS (
    SELECT q.destination_id, count(*) AS retrying
    FROM task_queue q WHERE q.region = $2 AND q.retrying
    GROUP BY q.destination_id
),
failed AS (
    SELECT f.destination_id, count(*) AS failed
    FROM task_failures f, clock
    WHERE f.region = $2
      AND f.failed_at > clock.now - interval '1 hour' AND f.failed_at <= clock.now
    GROUP BY f.destination_id
),
limited AS (
    SELECT t.destination_id, count(*) AS rate_limited
    FROM attempts a JOIN tasks t ON t.id = a.task_id, clock
    WHERE a.http_status = 429 AND t.region = $2
      AND a.recorded_at > clock.now - interval '1 hour' AND a.recorded_at <= clock.now
    GROUP BY t.destination_id
)
SELECT d.id AS destination,
       d.quota_limit, d.quota_remaining, d.quota_resets_at, d.quota_learned_at,
       coalesce(live.in_flight, 0) AS in_flight,
       coalesce(live.due_backlog, 0) AS due_backlog,
       coalesce(limited.rate_limited, 0) AS rate_limited,
       coalesce(failed.failed, 0) AS failed,
       coalesce(retrying.retrying, 0) - coalesce(live.leased_marked, 0)
           + coalesce(live.leased_retrying, 0) AS retrying,
       oldest.not_before AS oldest_due
FROM destinations d
LEFT JOIN live ON live.destination_id = d.id
LEFT JOIN retrying ON retrying.destination_id = d.id
LEFT JOIN failed ON failed.destination_id = d.id
LEFT JOIN limited ON limited.destination_id = d.id
LEFT JOIN LATERAL (
    SELECT least(
        (SELECT q.not_before FROM task_queue q
         WHERE q.destination_id = d.id AND q.late_seen = false
           AND q.not_before <= (SELECT now FROM clock)
         ORDER BY q.not_before LIMIT 1),
        (SELECT q.not_before FROM task_queue q
         WHERE q.destination_id = d.id AND q.late_seen = true
           AND q.not_before <= (SELECT now FROM clock)
         ORDER BY q.not_before LIMIT 1)) AS not_before
) oldest ON true
WHERE d.region = $2 AND d.deleted_at IS NULL
ORDER BY d.id
"#;

/// The minute (0 = the oldest of the hour, 59 = the one ending at `now`)
/// an instant of the window (now - 1 hour, now] falls in.
macro_rules! minute_of {
    ($at:literal) => {
        concat!(
            "(ceil(EXTRACT(EPOCH FROM ",
            $at,
            " - (clock.now - interval '1 hour')) / 60)::int - 1)"
        )
    };
}

/// The region's ($2) tasks delivered in the last hour, by minute: how many,
/// and their deadline-to-delivery percentiles in microseconds.
pub const ACTIVITY_ENDED: &str = concat!(
    r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT "#,
    minute_of!("t.finalized_at"),
    r#" AS minute,
       count(*) FILTER (WHERE t.state = 'delivered') AS delivered,
       (EXTRACT(EPOCH FROM percentile_disc(0.5) WITHIN GROUP (ORDER BY t.delivered_at - t.not_before)
            FILTER (WHERE t.state = 'delivered')) * 1e6)::int8 AS p50,
       (EXTRACT(EPOCH FROM percentile_disc(0.99) WITHIN GROUP (ORDER BY t.delivered_at - t.not_before)
            FILTER (WHERE t.state = 'delivered')) * 1e6)::int8 AS p99
FROM task_ends e"#,
    ended_task!(),
    r#", clock
WHERE e.region = $2
  AND e.finalized_at > clock.now - interval '1 hour' AND e.finalized_at <= clock.now
GROUP BY 1
"#
);

/// The region's ($2) 429 answers of the last hour, by minute.
pub const ACTIVITY_RATE_LIMITED: &str = concat!(
    r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT "#,
    minute_of!("a.recorded_at"),
    r#" AS minute, count(*) AS n
FROM attempts a JOIN tasks t ON t.id = a.task_id, clock
WHERE a.http_status = 429 AND t.region = $2
  AND a.recorded_at > clock.now - interval '1 hour' AND a.recorded_at <= clock.now
GROUP BY 1
"#
);

/// The region's ($2) failures of the last hour by minute, from the
/// failure log (`task_failures`): a failure replayed since still counts in
/// the minute it happened.
pub const ACTIVITY_FAILED: &str = concat!(
    r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT "#,
    minute_of!("f.failed_at"),
    r#" AS minute, count(*) AS n
FROM task_failures f, clock
WHERE f.region = $2 AND f.failed_at > clock.now - interval '1 hour' AND f.failed_at <= clock.now
GROUP BY 1
"#
);

/// The region's ($2) failures of the last hour by reason, from the failure
/// log, replayed ones included.
pub const ACTIVITY_FAILURES: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now)
SELECT f.failure_reason AS reason, count(*) AS n
FROM task_failures f, clock
WHERE f.region = $2 AND f.failed_at > clock.now - interval '1 hour' AND f.failed_at <= clock.now
GROUP BY f.failure_reason
ORDER BY n DESC, f.failure_reason
"#;

/// One batch of a bulk replay, under the job's row lock: the region's ($1)
/// failed tasks after the cursor ($2) that ended by the job's creation
/// ($3) and match its filter ($4 tenant, $5 reminder, $6 destination,
/// $7 reason, $8 from, $9 until), at most $10 of them in id order, go back
/// to `pending` as a one-task replay sends them (fresh horizon $11 ms,
/// clock $12). Answers how many it looked at, the last id looked at and
/// how many it replayed. The walk reads `tasks_failed` (region, id).
pub const REPLAY_BATCH: &str = concat!(
    r#"
WITH clock AS (SELECT coalesce($12, now()) AS now),
picked AS (
    SELECT t.id
    FROM tasks t
    WHERE t.region = $1 AND t.failure_reason IS NOT NULL AND t.state = 'failed'
      AND t.id > $2 AND t.finalized_at <= $3
      AND ($4::text IS NULL OR t.tenant_id = $4)
      AND ($5::text IS NULL OR t.reminder_id = $5)
      AND ($6::text IS NULL OR t.destination_id = $6)
      AND ($7::text IS NULL OR t.failure_reason = $7)
      AND ($8::timestamptz IS NULL OR t.not_before >= $8)
      AND ($9::timestamptz IS NULL OR t.not_before < $9)
    ORDER BY t.id
    LIMIT $10
),
replayed AS (
    UPDATE tasks t
    "#,
    replay_set!("$11"),
    r#"
    FROM clock
    -- An erased payload is gone: nothing to send again.
    WHERE t.id IN (SELECT id FROM picked) AND t.state = 'failed'
      AND t.payload_erased_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM destinations d
                      WHERE d.id = t.destination_id AND d.deleted_at IS NOT NULL)
    RETURNING t.id
)
SELECT (SELECT count(*) FROM picked) AS picked,
       (SELECT id FROM picked ORDER BY id DESC LIMIT 1) AS last,
       (SELECT count(*) FROM replayed) AS replayed
"#
);

/// A bulk cancel's next batch, read without a lock: the ids of up to `$9`
/// of the region's tasks after the cursor `$2` that have not ended (the
/// queue holds one row for each, whatever its state, leased included),
/// were scheduled by the job's creation `$3`, and match the filter
/// (tenant, reminder, destination, `not_before` in [`$7`, `$8`)), in id
/// order. The store then locks them and applies the cancel's rule to each
/// row as it stands.
pub const CANCEL_BATCH: &str = r#"
SELECT q.task_id AS id
FROM task_queue q
JOIN tasks t ON t.id = q.task_id
WHERE q.region = $1 AND q.task_id > $2 AND t.created_at <= $3
  AND ($4::text IS NULL OR t.tenant_id = $4)
  AND ($5::text IS NULL OR t.reminder_id = $5)
  AND ($6::text IS NULL OR t.destination_id = $6)
  AND ($7::timestamptz IS NULL OR t.not_before >= $7)
  AND ($8::timestamptz IS NULL OR t.not_before < $8)
ORDER BY q.task_id
LIMIT $9
"#;
