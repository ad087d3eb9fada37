//! A logical webhook and its life cycle.

use chrono::{DateTime, Utc};

use super::ids::DestinationId;
use super::ids::OrderingKey;
use super::ids::Region;
use super::ids::ReminderId;
use super::ids::TaskId;
use super::ids::TenantId;
use super::payload::Payload;
use super::trace_parent::TraceParent;

/// Where a task stands. The database enforces which columns each state
/// needs; the store's guarded transitions (`store::rules::lifecycle`) are the only
/// way between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// In: `schedule`; a `replay` of a failed task; a `hand_back` (a lease
    /// handed back unsent) of the first attempt since either. Out: a claim,
    /// once `not_before` and `available_at` have passed.
    Pending,
    /// In: a claim, of a due row or of an expired lease (the lost attempt
    /// is logged `abandoned`). Out, under the lease's token: the holder's
    /// finish (`finish` with the policy's decision, `fail`, `abandon`) or
    /// hand-back (`hand_back`); another lease owner's claim once the lease
    /// has expired; reconciliation's reclaim of an expired lease.
    Leased,
    /// In: a `finish` that retries after a retryable outcome; `abandon` (the
    /// outcome is unknown); a `hand_back` after earlier attempts;
    /// reconciliation's reclaim. Out: a claim once `available_at` has
    /// passed.
    RetryWait,
    /// In: a `finish` that delivers. Terminal: nothing moves it.
    Delivered,
    /// In: `fail`, with a reason; a `hand_back` past the retry horizon. Out:
    /// an operator's `replay` or `reschedule`, back to `pending`.
    Failed,
    /// In: an operator's `cancel` (or `erase`) of a task that was not in
    /// flight, or of one in flight once its attempt ended without a
    /// delivery. Out: only an operator's `reschedule`, back to `pending`.
    Cancelled,
}

impl TaskState {
    /// Every state, in the order a task meets them.
    pub const ALL: [TaskState; 6] = [
        TaskState::Pending,
        TaskState::Leased,
        TaskState::RetryWait,
        TaskState::Delivered,
        TaskState::Failed,
        TaskState::Cancelled,
    ];

    /// The state `label` (as `as_str` writes it) names, if any.
    pub fn from_label(label: &str) -> Option<TaskState> {
        TaskState::ALL.into_iter().find(|s| s.as_str() == label)
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Delivered | TaskState::Failed | TaskState::Cancelled
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Leased => "leased",
            TaskState::RetryWait => "retry_wait",
            TaskState::Delivered => "delivered",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }
}

/// Why a task ended in `failed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureReason {
    /// The receiver answered with a status that is not retried.
    Status(u16),
    /// The receiver redirected; remit never follows redirects.
    Redirect(u16),
    /// The next attempt would have started after the retry horizon.
    RetryHorizon,
    /// The attempt budget is spent.
    MaxAttempts,
    /// Every address the destination's host resolved to when connecting is
    /// one remit refuses (loopback, private, link-local, ...), or the URL
    /// is plain http where that is not allowed. Retrying would only ask
    /// again.
    BlockedAddress,
    /// Its destination was disabled (by a failure streak or by hand) when
    /// the task's retry horizon passed: it was never sent.
    DestinationDisabled,
    /// No key opens its payload (the stored bytes were altered, or sealed
    /// under a key no process holds) and its retry horizon passed: it was
    /// never sent.
    PayloadUnreadable,
}

impl FailureReason {
    /// The stable text stored in `tasks.failure_reason`.
    pub fn code(&self) -> String {
        match self {
            FailureReason::Status(s) => format!("http_{s}"),
            FailureReason::Redirect(s) => format!("redirect_{s}"),
            FailureReason::RetryHorizon => "retry_horizon".to_owned(),
            FailureReason::MaxAttempts => "max_attempts".to_owned(),
            FailureReason::BlockedAddress => "blocked_address".to_owned(),
            FailureReason::DestinationDisabled => "destination_disabled".to_owned(),
            FailureReason::PayloadUnreadable => "payload_unreadable".to_owned(),
        }
    }
}

/// A request to schedule one logical webhook.
#[derive(Debug, Clone)]
pub struct NewTask {
    pub tenant_id: TenantId,
    pub reminder_id: ReminderId,
    pub destination_id: DestinationId,
    pub region: Region,
    /// The business deadline: never sent before it.
    pub not_before: DateTime<Utc>,
    /// How long after `not_before` retries may still start.
    pub retry_horizon: chrono::Duration,
    pub payload: Payload,
    /// Tasks of the same destination and key are sent one at a time, in
    /// order of `not_before`, then of scheduling; `None` for no order.
    pub ordering_key: Option<OrderingKey>,
    /// The span that scheduled it (the API request's), when tracing is
    /// on: each attempt is traced as its child. Not part of what makes a
    /// repeat of the same request: a retried request has a span of its own.
    pub traceparent: Option<TraceParent>,
}

/// The scheduling envelope of a task. It holds no payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub id: TaskId,
    pub tenant_id: TenantId,
    pub reminder_id: ReminderId,
    pub destination_id: DestinationId,
    pub region: Region,
    pub state: TaskState,
    pub not_before: DateTime<Utc>,
    pub available_at: DateTime<Utc>,
    pub retry_horizon_at: DateTime<Utc>,
    pub lease_token: Option<i64>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// Attempts made so far, across replays: the attempt log numbers them
    /// 1, 2, 3 … and a replay never starts over.
    pub attempt_count: i32,
    /// `attempt_count` when the task was last replayed (0 if never): the
    /// retry budget counts only the attempts since.
    pub attempts_before_replay: i32,
    pub idempotency_key: String,
    /// Where the encrypted body lives, apart from this envelope.
    pub payload_ref: uuid::Uuid,
    pub last_status: Option<u16>,
    pub failure_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub finalized_at: Option<DateTime<Utc>>,
    /// The line this task waits in, if any: it is claimed only when no
    /// other task of its destination and key that has not ended comes
    /// before it in (`not_before`, `id`). Task ids are time-ordered, so
    /// `id` is the order of scheduling.
    pub ordering_key: Option<OrderingKey>,
    /// The span that scheduled the task, as `NewTask` gave it.
    pub traceparent: Option<TraceParent>,
    /// Who cancelled the task and when they asked, once someone has (kept
    /// when the attempt in flight delivered it anyway, as a record).
    pub cancelled: Option<Cancellation>,
    /// An operator's change that waits for the attempt in flight to end.
    pub waiting_change: Option<WaitingChange>,
    /// When an operator erased the payload: its sealed bytes are gone.
    pub payload_erased_at: Option<DateTime<Utc>>,
}

/// Who cancelled a task, and when they asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cancellation {
    pub at: DateTime<Utc>,
    /// A token's id, `cli`, or `bootstrap`.
    pub by: String,
}

/// A change asked of a task while an attempt was in flight. A request
/// that has started cannot be called back, so the change waits: when the
/// attempt delivers, it lapses; otherwise it is applied instead of the
/// retry (`Changes::settle_changes`). Until then the task is not claimed,
/// even once its lease runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitingChange {
    /// End the task `cancelled`.
    Cancel,
    /// Move the task's deadline to this time.
    Move(DateTime<Utc>),
}

impl WaitingChange {
    /// The label the `waiting_change` column holds.
    pub fn label(self) -> &'static str {
        match self {
            WaitingChange::Cancel => "cancel",
            WaitingChange::Move(_) => "move",
        }
    }

    /// The change a row's `waiting_change` and `move_to` columns hold;
    /// `None` for a label no version of remit writes, or a move without
    /// its time.
    pub fn from_columns(
        label: Option<&str>,
        move_to: Option<DateTime<Utc>>,
    ) -> Option<Option<Self>> {
        match (label, move_to) {
            (None, _) => Some(None),
            (Some("cancel"), _) => Some(Some(WaitingChange::Cancel)),
            (Some("move"), Some(at)) => Some(Some(WaitingChange::Move(at))),
            _ => None,
        }
    }

    pub fn move_to(self) -> Option<DateTime<Utc>> {
        match self {
            WaitingChange::Move(at) => Some(at),
            WaitingChange::Cancel => None,
        }
    }
}

impl Task {
    /// The attempts that count against the retry budget: those since the
    /// last replay. A replayed task gets a fresh budget while its attempt
    /// numbers keep rising.
    pub fn attempts_since_replay(&self) -> u32 {
        u32::try_from(self.attempt_count - self.attempts_before_replay).unwrap_or(0)
    }
}

/// A task this lease owner now holds, with the fencing token every finish must
/// present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedTask {
    pub task: Task,
    pub lease_token: i64,
    pub lease_expires_at: DateTime<Utc>,
    /// The row was taken over from a consumer whose lease expired.
    pub reclaimed: bool,
    /// The opened payload, when the claim could bring it along; otherwise
    /// [`crate::store::Schedule::payload`] reads it (and says why it cannot be
    /// opened).
    pub payload: Option<super::payload::Payload>,
}

impl ClaimedTask {
    /// The credential every finishing transition must present.
    pub fn lease(&self) -> Lease {
        Lease {
            task_id: self.task.id,
            token: self.lease_token,
            owner: self.task.lease_owner.clone().unwrap_or_default(),
            attempt: self.task.attempt_count,
        }
    }

    /// The task's retry horizon on a consumer's own clock. The horizon is
    /// on the store's clock; the claim set the lease to end `lease` after
    /// the store's now, so the horizon lies `retry_horizon_at - (expiry -
    /// lease)` after the claim, which the consumer read as `claimed_at` on
    /// its clock. A consumer whose clock is off thus judges the horizon as
    /// the store would.
    pub fn retry_horizon_seen_at(
        &self,
        lease: chrono::Duration,
        claimed_at: DateTime<Utc>,
    ) -> DateTime<Utc> {
        let claimed_by_store = self.lease_expires_at - lease;
        claimed_at
            .checked_add_signed(self.task.retry_horizon_at - claimed_by_store)
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }
}

/// Proof of ownership: a task id, the fencing token its claim handed out,
/// and the consumer that holds it. A finish succeeds only while the row
/// still carries this token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lease {
    pub task_id: TaskId,
    pub token: i64,
    pub owner: String,
    /// The attempt number this lease was claimed for.
    pub attempt: i32,
}

#[cfg(test)]
impl Task {
    /// A task leased at `now` for `lease`, with its horizon `horizon` away
    /// and `attempt_count` attempts: a fixture for unit tests.
    pub(crate) fn leased_for_tests(
        now: DateTime<Utc>,
        lease: chrono::Duration,
        horizon: chrono::Duration,
        attempt_count: i32,
    ) -> Task {
        use super::{DestinationId, Region, ReminderId, TenantId};
        Task {
            id: TaskId(uuid::Uuid::nil()),
            tenant_id: TenantId::new("clinic").unwrap(),
            reminder_id: ReminderId::new("r1").unwrap(),
            destination_id: DestinationId::new("crm").unwrap(),
            region: Region::US,
            state: TaskState::Leased,
            not_before: now,
            available_at: now,
            retry_horizon_at: now + horizon,
            lease_token: Some(1),
            lease_owner: Some("us-1".into()),
            lease_expires_at: Some(now + lease),
            attempt_count,
            attempts_before_replay: 0,
            idempotency_key: "msg_x".into(),
            payload_ref: uuid::Uuid::nil(),
            last_status: None,
            failure_reason: None,
            created_at: now,
            updated_at: now,
            delivered_at: None,
            finalized_at: None,
            ordering_key: None,
            traceparent: None,
            cancelled: None,
            waiting_change: None,
            payload_erased_at: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::*;

    #[test]
    fn a_consumers_clock_sees_the_horizon_as_far_off_as_the_store_does() {
        let store_now = Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap();
        let lease = Duration::seconds(30);
        let task = Task::leased_for_tests(store_now, lease, Duration::hours(1), 1);
        let claimed = ClaimedTask {
            task,
            lease_token: 1,
            lease_expires_at: store_now + lease,
            reclaimed: false,
            payload: None,
        };
        // A consumer whose clock is ten seconds behind read the claim at
        // 08:59:50; the horizon is an hour after that on its clock.
        let behind = store_now - Duration::seconds(10);
        assert_eq!(
            claimed.retry_horizon_seen_at(lease, behind),
            behind + Duration::hours(1)
        );
    }
}
