//! What /v1/tasks answers: a task, its state and its attempt log, as
//! JSON and as the OpenAPI schemas that describe it. Never a payload.

use chrono::{DateTime, Utc};
use remit::domain::{Attempt, AttemptOutcome, Task, TaskState, WaitingChange};
use serde::Serialize;
use utoipa::ToSchema;

/// What scheduling answers about a task.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "0b7c2f0e-3f1a-4a53-9a55-6d1c1e0f4b2a",
    "idempotency_key": "msg_7geze44iwclfoejpwsfxgayecu", "state": "pending"
}))]
pub struct TaskSummary {
    pub id: uuid::Uuid,
    /// Sent with every attempt as `idempotency-key` and `webhook-id`.
    pub idempotency_key: String,
    pub state: TaskStateView,
}

impl From<&Task> for TaskSummary {
    fn from(task: &Task) -> Self {
        Self {
            id: task.id.0,
            idempotency_key: task.idempotency_key.clone(),
            state: task.state.into(),
        }
    }
}

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStateView {
    Pending,
    Leased,
    RetryWait,
    Delivered,
    Failed,
    Cancelled,
}

impl From<TaskState> for TaskStateView {
    fn from(state: TaskState) -> Self {
        match state {
            TaskState::Pending => Self::Pending,
            TaskState::Leased => Self::Leased,
            TaskState::RetryWait => Self::RetryWait,
            TaskState::Delivered => Self::Delivered,
            TaskState::Failed => Self::Failed,
            TaskState::Cancelled => Self::Cancelled,
        }
    }
}

/// A task as `GET /v1/tasks/{id}` shows it, with its attempt log; never
/// its payload.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskView {
    #[serde(flatten)]
    pub task: TaskFields,
    /// The attempt log, oldest first.
    pub attempts: Vec<AttemptView>,
}

impl TaskView {
    pub fn new(task: &Task, attempts: &[Attempt]) -> Self {
        Self {
            task: TaskFields::from(task),
            attempts: attempts.iter().map(AttemptView::from).collect(),
        }
    }
}

/// A task's envelope and state, as a list shows it; never its payload.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskFields {
    pub id: uuid::Uuid,
    pub tenant_id: String,
    pub reminder_id: String,
    pub destination_id: String,
    pub region: String,
    pub state: TaskStateView,
    pub idempotency_key: String,
    pub not_before: DateTime<Utc>,
    /// When the task is next due.
    pub available_at: DateTime<Utc>,
    /// Retries may start until then.
    pub retry_horizon_at: DateTime<Utc>,
    /// Attempts made so far, across replays.
    pub attempt_count: i32,
    /// The process holding the task while it is `leased`.
    #[schema(required = true)]
    pub lease_owner: Option<String>,
    #[schema(required = true)]
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// The receiver's latest HTTP status.
    #[schema(required = true)]
    pub last_status: Option<u16>,
    /// Why the task failed: `http_<status>`, `redirect_<status>`,
    /// `retry_horizon`, `max_attempts`, `blocked_address` or
    /// `destination_disabled`.
    #[schema(required = true)]
    pub failure_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[schema(required = true)]
    pub delivered_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub finalized_at: Option<DateTime<Utc>>,
    /// The line the task waits in: tasks of its destination with this key
    /// go one at a time, in order. `null` for no order.
    #[schema(required = true)]
    pub ordering_key: Option<String>,
    /// Who cancelled the task (a token's id, `bootstrap` or `cli`) and
    /// when they asked; kept when the attempt in flight then delivered it.
    #[schema(required = true)]
    pub cancelled: Option<CancellationView>,
    /// A change asked while an attempt was in flight, applied when that
    /// attempt ends without a delivery: `cancel`, or `move` to `move_to`.
    #[schema(required = true)]
    pub waiting_change: Option<WaitingChangeView>,
    #[schema(required = true)]
    pub move_to: Option<DateTime<Utc>>,
    /// When the payload was erased: remit no longer holds it.
    #[schema(required = true)]
    pub payload_erased_at: Option<DateTime<Utc>>,
}

/// Who cancelled a task, and when they asked.
#[derive(Debug, Serialize, ToSchema)]
pub struct CancellationView {
    pub at: DateTime<Utc>,
    pub by: String,
}

/// A change waiting for the attempt in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WaitingChangeView {
    Cancel,
    Move,
}

impl From<&Task> for TaskFields {
    fn from(task: &Task) -> Self {
        Self {
            id: task.id.0,
            tenant_id: task.tenant_id.as_str().to_owned(),
            reminder_id: task.reminder_id.as_str().to_owned(),
            destination_id: task.destination_id.as_str().to_owned(),
            region: task.region.as_str().to_owned(),
            state: task.state.into(),
            idempotency_key: task.idempotency_key.clone(),
            not_before: task.not_before,
            available_at: task.available_at,
            retry_horizon_at: task.retry_horizon_at,
            attempt_count: task.attempt_count,
            lease_owner: task.lease_owner.clone(),
            lease_expires_at: task.lease_expires_at,
            last_status: task.last_status,
            failure_reason: task.failure_reason.clone(),
            created_at: task.created_at,
            updated_at: task.updated_at,
            delivered_at: task.delivered_at,
            finalized_at: task.finalized_at,
            ordering_key: task.ordering_key.as_ref().map(|k| k.as_str().to_owned()),
            cancelled: task.cancelled.as_ref().map(|c| CancellationView {
                at: c.at,
                by: c.by.clone(),
            }),
            waiting_change: task.waiting_change.map(|c| match c {
                WaitingChange::Cancel => WaitingChangeView::Cancel,
                WaitingChange::Move(_) => WaitingChangeView::Move,
            }),
            move_to: task.waiting_change.and_then(|c| c.move_to()),
            payload_erased_at: task.payload_erased_at,
        }
    }
}

/// One try at delivering a task. Never a payload or a response body.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptView {
    /// 1, 2, 3 … across replays.
    pub attempt_number: i32,
    pub outcome: AttemptOutcomeView,
    /// The process that made the attempt: its lease owner (the process's
    /// `lease_owner` setting).
    pub lease_owner: String,
    /// `lease_owner` under its former name, kept for one release.
    #[schema(deprecated)]
    pub consumer_id: String,
    pub lease_token: i64,
    #[schema(required = true)]
    pub started_at: Option<DateTime<Utc>>,
    /// When the response arrived.
    #[schema(required = true)]
    pub received_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub http_status: Option<u16>,
    /// `timeout`, `connect`, `tls`, `io` or `blocked_address` when no
    /// response came.
    #[schema(required = true)]
    pub transport_error: Option<String>,
    /// The receiver's `Retry-After` header exactly as received.
    #[schema(required = true)]
    pub retry_after_raw: Option<String>,
    /// The time that `Retry-After` named.
    #[schema(required = true)]
    pub retry_after_deadline: Option<DateTime<Utc>>,
    /// When the task became due again after this attempt.
    #[schema(required = true)]
    pub next_available_at: Option<DateTime<Utc>>,
    pub recorded_at: DateTime<Utc>,
}

impl From<&Attempt> for AttemptView {
    fn from(a: &Attempt) -> Self {
        Self {
            attempt_number: a.attempt_number,
            outcome: a.outcome.into(),
            lease_owner: a.lease_owner.clone(),
            consumer_id: a.lease_owner.clone(),
            lease_token: a.lease_token,
            started_at: a.observed.started_at,
            received_at: a.observed.received_at,
            http_status: a.observed.http_status,
            transport_error: a.observed.transport_error.clone(),
            retry_after_raw: a.observed.retry_after_raw.clone(),
            retry_after_deadline: a.observed.retry_after_deadline,
            next_available_at: a.next_available_at,
            recorded_at: a.recorded_at,
        }
    }
}

/// How an attempt ended. `fenced`: a consumer that had lost its lease
/// reported what the receiver said, and nothing changed. `abandoned`: the
/// consumer's lease ran out, or its sender failed, before it reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcomeView {
    Delivered,
    RetryWait,
    Failed,
    Fenced,
    Abandoned,
}

impl From<AttemptOutcome> for AttemptOutcomeView {
    fn from(outcome: AttemptOutcome) -> Self {
        match outcome {
            AttemptOutcome::Delivered => Self::Delivered,
            AttemptOutcome::RetryWait => Self::RetryWait,
            AttemptOutcome::Failed => Self::Failed,
            AttemptOutcome::Fenced => Self::Fenced,
            AttemptOutcome::Abandoned => Self::Abandoned,
        }
    }
}

#[cfg(test)]
mod tests {
    use remit::domain::{AttemptOutcome, TaskState};

    use super::{AttemptOutcomeView, TaskStateView};

    // The views must say what the domain's stable labels say.
    #[test]
    fn states_and_outcomes_keep_their_labels() {
        for state in TaskState::ALL {
            let view = serde_json::to_value(TaskStateView::from(state)).unwrap();
            assert_eq!(view, state.as_str());
        }
        for outcome in [
            AttemptOutcome::Delivered,
            AttemptOutcome::RetryWait,
            AttemptOutcome::Failed,
            AttemptOutcome::Fenced,
            AttemptOutcome::Abandoned,
        ] {
            let view = serde_json::to_value(AttemptOutcomeView::from(outcome)).unwrap();
            assert_eq!(view, outcome.as_str());
        }
    }
}
