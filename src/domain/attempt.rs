//! One try at delivering a task, as the append-only attempt log keeps it.

use chrono::{DateTime, Utc};

use super::ids::TaskId;

/// How an attempt ended, as the attempt log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    RetryWait,
    Failed,
    /// A late lease owner reported after losing its lease; nothing changed.
    Fenced,
    /// The lease owner's lease expired before it reported; another took over.
    Abandoned,
}

impl AttemptOutcome {
    /// The stable label stored in the attempt log.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Delivered => "delivered",
            AttemptOutcome::RetryWait => "retry_wait",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Fenced => "fenced",
            AttemptOutcome::Abandoned => "abandoned",
        }
    }
}

/// What one attempt observed; the attempt row is written from it. Never a
/// payload or a response body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttemptRecord {
    pub started_at: Option<DateTime<Utc>>,
    pub received_at: Option<DateTime<Utc>>,
    pub http_status: Option<u16>,
    pub transport_error: Option<String>,
    /// The Retry-After header exactly as received.
    pub retry_after_raw: Option<String>,
    pub retry_after_deadline: Option<DateTime<Utc>>,
}

/// One row of the attempt log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub task_id: TaskId,
    pub attempt_number: i32,
    pub lease_token: i64,
    pub lease_owner: String,
    pub outcome: AttemptOutcome,
    pub observed: AttemptRecord,
    pub next_available_at: Option<DateTime<Utc>>,
    pub recorded_at: DateTime<Utc>,
}
