//! What the web console and bulk changes read and write beside the `Store`
//! trait: a task search, each destination's summary, the last hour's
//! activity, and replay jobs (a bulk replay or a bulk cancel by filter,
//! recorded so that it survives a restart and reports its progress). Never
//! a payload.

use chrono::{DateTime, Duration, Utc};

use crate::domain::{
    Destination, DestinationId, Region, ReminderId, Task, TaskId, TaskState, TenantId,
};
use crate::store::Latency;

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

/// What a job does to each task it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobAction {
    /// Sends every failed task of the region that matches, and had ended
    /// when the job was made, round again (as `Schedule::replay` does).
    Replay,
    /// Cancels every task of the region that matches, had been scheduled
    /// when the job was made and has not ended when the job gets to it (as
    /// `Changes::cancel` does: a task in flight after its attempt).
    Cancel,
}

impl JobAction {
    /// The label the `action` column holds, and the API shows.
    pub fn as_str(self) -> &'static str {
        match self {
            JobAction::Replay => "replay",
            JobAction::Cancel => "cancel",
        }
    }

    /// The action a label names; `None` for one no version of remit
    /// writes.
    pub fn from_label(label: &str) -> Option<Self> {
        match label {
            "replay" => Some(JobAction::Replay),
            "cancel" => Some(JobAction::Cancel),
            _ => None,
        }
    }
}

impl std::fmt::Display for JobAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which tasks a job takes: of the region, every one that matches (a
/// replay: failed, and ended before the job was made; a cancel: scheduled
/// before the job was made, and not ended).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayFilter {
    pub tenant: Option<TenantId>,
    pub reminder: Option<ReminderId>,
    pub destination: Option<DestinationId>,
    /// `failure_reason` exactly (`max_attempts`, `retry_horizon`, …); a
    /// replay's only (a task that has not ended has none).
    pub reason: Option<String>,
    /// `not_before` at or after this.
    pub from: Option<DateTime<Utc>>,
    /// `not_before` before this.
    pub until: Option<DateTime<Utc>>,
}

/// A bulk replay or cancel to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReplayJob {
    pub region: Region,
    pub action: JobAction,
    pub filter: ReplayFilter,
    /// Who asked: a token id, `bootstrap` or `cli`. A cancel job's tasks
    /// are recorded as cancelled by it.
    pub requested_by: String,
    /// The fresh horizon each replayed task gets (recorded, and unused, for
    /// a cancel).
    pub horizon: Duration,
}

/// A recorded bulk replay or cancel and how far it has got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayJob {
    pub id: uuid::Uuid,
    pub region: Region,
    pub action: JobAction,
    pub filter: ReplayFilter,
    pub requested_by: String,
    pub horizon: Duration,
    pub created_at: DateTime<Utc>,
    /// Tasks the job acted on so far: replayed, or (a cancel) cancelled
    /// now or after their attempt in flight.
    pub replayed: i64,
    /// The last task id looked at; the next batch starts after it.
    pub cursor: Option<TaskId>,
    /// When it found nothing more to act on.
    pub finished_at: Option<DateTime<Utc>>,
}

impl ReplayJob {
    pub fn finished(&self) -> bool {
        self.finished_at.is_some()
    }
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

/// A replay job's columns as either store reads them.
pub(crate) struct JobColumns {
    pub id: uuid::Uuid,
    pub region: String,
    pub action: String,
    pub tenant_id: Option<String>,
    pub reminder_id: Option<String>,
    pub destination_id: Option<String>,
    pub failure_reason: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    pub requested_by: String,
    pub horizon_seconds: i64,
    pub created_at: DateTime<Utc>,
    pub replayed: i64,
    pub cursor: Option<uuid::Uuid>,
    pub finished_at: Option<DateTime<Utc>>,
}

impl TryFrom<JobColumns> for ReplayJob {
    type Error = crate::store::StoreError;

    fn try_from(c: JobColumns) -> Result<Self, Self::Error> {
        use crate::store::rules::columns::{corrupt, region};
        Ok(ReplayJob {
            id: c.id,
            region: region("replay_jobs.region", &c.region)?,
            action: JobAction::from_label(&c.action).ok_or_else(|| {
                corrupt(
                    "replay_jobs.action",
                    format!("{:?} is not replay or cancel", c.action),
                )
            })?,
            filter: ReplayFilter {
                tenant: c
                    .tenant_id
                    .map(|t| TenantId::new(&t).map_err(|e| corrupt("replay_jobs.tenant_id", e)))
                    .transpose()?,
                reminder: c
                    .reminder_id
                    .map(|r| ReminderId::new(&r).map_err(|e| corrupt("replay_jobs.reminder_id", e)))
                    .transpose()?,
                destination: c
                    .destination_id
                    .map(|d| {
                        DestinationId::new(&d).map_err(|e| corrupt("replay_jobs.destination_id", e))
                    })
                    .transpose()?,
                reason: c.failure_reason,
                from: c.from,
                until: c.until,
            },
            requested_by: c.requested_by,
            horizon: Duration::seconds(c.horizon_seconds),
            created_at: c.created_at,
            replayed: c.replayed,
            cursor: c.cursor.map(TaskId),
            finished_at: c.finished_at,
        })
    }
}

/// Refuses a job no store should record, naming the field.
pub(crate) fn check_new_job(new: &NewReplayJob) -> Result<(), crate::domain::InvalidInput> {
    use crate::domain::InvalidInput;
    if new.horizon < Duration::seconds(1) {
        return Err(InvalidInput::new("horizon", "must be at least one second"));
    }
    if new.requested_by.is_empty() {
        return Err(InvalidInput::new("requested_by", "must not be empty"));
    }
    // Only a failed task has a failure reason; a cancel takes tasks that
    // have not ended.
    if new.action == JobAction::Cancel && new.filter.reason.is_some() {
        return Err(InvalidInput::new(
            "reason",
            "a cancel takes no failure reason: only a failed task has one",
        ));
    }
    // Every failed task of the region is too much to replay by accident,
    // and every task too much to cancel; the API, the console and the CLI
    // refuse it too, and this is the last line.
    if new.filter == ReplayFilter::default() {
        return Err(InvalidInput::new(
            "filter",
            match new.action {
                JobAction::Replay => {
                    "must name at least one of tenant, reminder, destination, reason, from, until"
                }
                JobAction::Cancel => {
                    "must name at least one of tenant, reminder, destination, from, until"
                }
            },
        ));
    }
    if new.filter.reason.as_deref() == Some("") {
        return Err(InvalidInput::new("reason", "must not be empty"));
    }
    if let (Some(from), Some(until)) = (new.filter.from, new.filter.until) {
        if from >= until {
            return Err(InvalidInput::new("until", "must be after from"));
        }
    }
    Ok(())
}
