//! `Jobs`: a bulk replay as a durable job, recorded first and then
//! advanced in batches by whichever process gets to it, so a restart
//! loses nothing and two processes never replay a task twice.

use std::future::Future;

use chrono::{DateTime, Duration, Utc};

use super::error::StoreError;
use crate::domain::{DestinationId, Region, ReminderId, TaskId, TenantId};

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
pub struct JobFilter {
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
pub struct NewJob {
    pub region: Region,
    pub action: JobAction,
    pub filter: JobFilter,
    /// Who asked: a token id, `bootstrap` or `cli`. A cancel job's tasks
    /// are recorded as cancelled by it.
    pub requested_by: String,
    /// The fresh horizon each replayed task gets (recorded, and unused, for
    /// a cancel).
    pub horizon: Duration,
}

/// A recorded bulk replay or cancel and how far it has got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: uuid::Uuid,
    pub region: Region,
    pub action: JobAction,
    pub filter: JobFilter,
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

impl Job {
    pub fn finished(&self) -> bool {
        self.finished_at.is_some()
    }
}

pub trait Jobs: Sync {
    /// Records a bulk replay; nothing is replayed yet.
    fn create_job(&self, new: NewJob) -> impl Future<Output = Result<Job, StoreError>> + Send;

    fn job(&self, id: uuid::Uuid) -> impl Future<Output = Result<Option<Job>, StoreError>> + Send;

    /// The region's jobs, newest first; only unfinished ones if asked.
    fn jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<Job>, StoreError>> + Send;

    /// Replays up to `batch` more of the job's tasks in one transaction
    /// with its cursor and count, and marks it finished when none is left.
    /// Safe to call from several processes at once.
    fn advance_job(
        &self,
        id: uuid::Uuid,
        batch: u32,
    ) -> impl Future<Output = Result<Job, StoreError>> + Send;
}

/// Refuses a job no store should record, naming the field.
pub(crate) fn check_new_job(new: &NewJob) -> Result<(), crate::domain::InvalidInput> {
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
    if new.filter == JobFilter::default() {
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
