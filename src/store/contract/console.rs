//! What the reports answer the web console and the API: a task search,
//! each destination's summary, the last hour's activity. Never a payload.

use chrono::{DateTime, Duration, Utc};

use super::status::Latency;
use crate::domain::{Destination, DestinationId, ReminderId, Task, TaskId, TaskState, TenantId};

/// Which tasks a search lists. Every field that is set narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFilter {
    pub id: Option<TaskId>,
    pub tenant: Option<TenantId>,
    pub reminder: Option<ReminderId>,
    pub destination: Option<DestinationId>,
    pub state: Option<TaskState>,
    /// `not_before` at or after this.
    pub from: Option<DateTime<Utc>>,
    /// `not_before` before this.
    pub until: Option<DateTime<Utc>>,
    /// A tenant-limited caller's tenants: nothing outside them is listed.
    pub only_tenants: Option<Vec<TenantId>>,
}

/// One page of a search, newest task first (task ids are time-ordered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskPage {
    pub tasks: Vec<Task>,
    /// Pass as `before` for the next page; `None` on the last.
    pub next: Option<TaskId>,
}

/// A destination as the console lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct DestinationSummary {
    pub destination: Destination,
    /// What its receiver last announced of its quota, if anything.
    pub learned_quota: Option<LearnedQuota>,
    /// Tasks leased now.
    pub in_flight: i64,
    /// Tasks due now and not leased (pending or retry_wait).
    pub due_backlog: i64,
    /// 429 answers in the last hour.
    pub rate_limited_last_hour: i64,
    /// Tasks that moved into `failed` in the last hour (a failure replayed
    /// since still counts).
    pub failed_last_hour: i64,
    /// Tasks waiting for a retry (`retry_wait`), or in flight on one (leased
    /// after an earlier attempt).
    pub retrying: i64,
    /// The deadline (`not_before`) of its oldest task that has not ended,
    /// when that deadline has come: how long its longest-waiting reminder
    /// has waited.
    pub oldest_due: Option<DateTime<Utc>>,
}

/// A receiver's announced quota, as the destination's row keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedQuota {
    pub limit: Option<i64>,
    pub remaining: f64,
    pub resets_at: DateTime<Utc>,
    pub learned_at: DateTime<Utc>,
}

/// A region's last hour, minute by minute, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// The store's clock when it was read.
    pub now: DateTime<Utc>,
    /// Sixty entries, one per minute, the last ending at `now`.
    pub minutes: Vec<MinuteActivity>,
    /// Tasks that ended failed in the hour, by reason, most first.
    pub failures_by_reason: Vec<(String, i64)>,
}

/// One minute of a region's activity.
#[derive(Debug, Clone, PartialEq)]
pub struct MinuteActivity {
    pub start: DateTime<Utc>,
    /// Tasks delivered in the minute.
    pub delivered: i64,
    /// 429 answers received in the minute.
    pub rate_limited: i64,
    /// Tasks that ended failed in the minute.
    pub failed: i64,
    /// From `not_before` to delivery, over the minute's deliveries.
    pub deadline_to_delivery: Option<Latency>,
}

/// A page of at most `limit` from a search that read one row more than
/// that: the extra row only says that another page follows.
pub(crate) fn page(mut tasks: Vec<Task>, limit: u32) -> TaskPage {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let more = tasks.len() > limit;
    tasks.truncate(limit);
    TaskPage {
        next: if more {
            tasks.last().map(|t| t.id)
        } else {
            None
        },
        tasks,
    }
}

/// The hour ending at `now`, sixty empty minutes, oldest first.
pub(crate) fn empty_hour(now: DateTime<Utc>) -> Vec<MinuteActivity> {
    (0..60)
        .map(|i| MinuteActivity {
            start: now - Duration::minutes(60 - i),
            delivered: 0,
            rate_limited: 0,
            failed: 0,
            deadline_to_delivery: None,
        })
        .collect()
}

/// The page size a console search uses unless told otherwise, and the
/// most a search may ask for.
pub const MAX_PAGE: u32 = 500;
