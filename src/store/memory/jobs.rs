//! Replay jobs in the model, as SQLite and PostgreSQL keep them: a job is
//! recorded, then advanced a batch at a time, each batch replaying its
//! tasks with `lifecycle::replay` (the one-task replay's rule), or
//! cancelling them with `changes::cancel` (the one-task cancel's), and
//! moving the job's cursor and count under the one lock, so two callers
//! advancing one job take turns as they do on a database.

use chrono::{DateTime, Duration, Utc};

use super::state::State;
use super::store::MemStore;
use crate::domain::{Region, Task, TaskId, TaskState};
use crate::store::contract::{check_new_job, Job, JobAction, Jobs, NewJob, StoreError};
use crate::store::rules::audit_entries;
use crate::store::rules::changes::{self, CancelStep};
use crate::store::rules::lifecycle;

impl State {
    /// A fresh job id; ids come from a counter, so a seeded run is
    /// reproducible, and rise with creation as `now_v7` ids do.
    fn replay_job_id(&mut self) -> uuid::Uuid {
        self.next_job_id += 1;
        uuid::Uuid::from_u128(self.next_job_id | (1 << 125))
    }

    /// Records a job already checked (`check_new_job`).
    pub(super) fn record_job(&mut self, new: NewJob, now: DateTime<Utc>) -> Job {
        let job = recorded(new, self.replay_job_id(), now);
        self.jobs.push(job.clone());
        job
    }

    fn job_mut(&mut self, id: uuid::Uuid) -> Result<&mut Job, StoreError> {
        self.jobs
            .iter_mut()
            .find(|j| j.id == id)
            .ok_or_else(|| StoreError::NotFound {
                what: "replay job",
                id: id.to_string(),
            })
    }

    /// The job's next batch: up to `batch` of the region's tasks after its
    /// cursor that it takes ([`in_job`]), in id order.
    fn replay_batch(&self, job: &Job, batch: usize) -> Vec<TaskId> {
        let mut picked: Vec<TaskId> = self
            .tasks
            .iter()
            .filter(|t| in_job(job, t))
            .map(|t| t.id)
            .collect();
        picked.sort_unstable();
        picked.truncate(batch);
        picked
    }
}

/// Whether the job's batches take `task` (the databases' batch queries):
/// a replay, a failed task that ended by the job's creation; a cancel, a
/// task that has not ended and was scheduled by the job's creation.
fn in_job(job: &Job, task: &Task) -> bool {
    let f = &job.filter;
    let eligible = match job.action {
        JobAction::Replay => {
            task.state == TaskState::Failed
                && task.failure_reason.is_some()
                && task.finalized_at.is_some_and(|at| at <= job.created_at)
        }
        JobAction::Cancel => !task.state.is_terminal() && task.created_at <= job.created_at,
    };
    task.region == job.region
        && eligible
        && job.cursor.is_none_or(|c| task.id > c)
        && f.tenant.as_ref().is_none_or(|t| *t == task.tenant_id)
        && f.reminder.as_ref().is_none_or(|r| *r == task.reminder_id)
        && f.destination
            .as_ref()
            .is_none_or(|d| *d == task.destination_id)
        && f.reason
            .as_ref()
            .is_none_or(|r| task.failure_reason.as_ref() == Some(r))
        && f.from.is_none_or(|from| task.not_before >= from)
        && f.until.is_none_or(|until| task.not_before < until)
}

/// The job as a database records it: the horizon is kept in whole seconds.
fn recorded(new: NewJob, id: uuid::Uuid, now: DateTime<Utc>) -> Job {
    Job {
        id,
        region: new.region,
        action: new.action,
        filter: new.filter,
        requested_by: new.requested_by,
        horizon: Duration::seconds(new.horizon.num_seconds()),
        created_at: now,
        replayed: 0,
        cursor: None,
        finished_at: None,
    }
}

impl Jobs for MemStore {
    async fn create_job(&self, new: NewJob) -> Result<Job, StoreError> {
        check_new_job(&new)?;
        let now = self.now();
        let mut state = self.state.lock();
        let job = state.record_job(new, now);
        self.audit_in(&mut state, audit_entries::job_created(&job));
        Ok(job)
    }

    async fn job(&self, id: uuid::Uuid) -> Result<Option<Job>, StoreError> {
        let state = self.state.lock();
        Ok(state.jobs.iter().find(|j| j.id == id).cloned())
    }

    async fn jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        let state = self.state.lock();
        let mut jobs: Vec<Job> = state
            .jobs
            .iter()
            .filter(|j| j.region == region && !(unfinished_only && j.finished()))
            .cloned()
            .collect();
        jobs.sort_by_key(|j| std::cmp::Reverse((j.created_at, j.id)));
        jobs.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(jobs)
    }

    async fn advance_job(&self, id: uuid::Uuid, batch: u32) -> Result<Job, StoreError> {
        let batch = usize::try_from(batch.max(1)).unwrap_or(usize::MAX);
        let now = self.now();
        let mut state = self.state.lock();
        state.record_failures();
        let job = state.job_mut(id)?.clone();
        if job.finished() {
            return Ok(job);
        }
        let picked = state.replay_batch(&job, batch);
        let mut replayed = 0;
        for &task_id in &picked {
            let deleted = state.destination_deleted(task_id);
            let task = state.task_mut(task_id).expect("a picked task is there");
            let before = task.clone();
            let done = match job.action {
                JobAction::Replay => lifecycle::replay(task, job.horizon, deleted, now),
                JobAction::Cancel => matches!(
                    changes::cancel(task, &job.requested_by, now),
                    CancelStep::Now | CancelStep::AfterAttempt
                ),
            };
            let after = task.clone();
            state.alert_records.moved(&before, &after);
            if done {
                replayed += 1;
            }
        }
        let job = state.job_mut(id)?;
        job.replayed += replayed;
        if let Some(&last) = picked.last() {
            job.cursor = Some(last);
        }
        if picked.len() < batch {
            job.finished_at = Some(now);
        }
        Ok(job.clone())
    }
}
