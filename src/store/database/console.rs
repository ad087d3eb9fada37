//! The console's reads and the replay jobs, each passed to the backend.

use super::Database;
use crate::domain::{Region, TaskId};
use crate::store::console::{
    Activity, DestinationSummary, NewReplayJob, ReplayJob, TaskFilter, TaskPage,
};
use crate::store::StoreError;

impl Database {
    /// Up to `limit` tasks of `region` matching `filter`, newest first,
    /// starting below `before`.
    pub async fn search_tasks(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        let _ = (region, filter, before, limit);
        todo!("search_tasks")
    }

    /// Every destination of `region`, by id, with its counts.
    pub async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        let _ = region;
        todo!("destination_summaries")
    }

    /// The region's last hour, minute by minute.
    pub async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        let _ = region;
        todo!("activity")
    }

    /// Records a bulk replay; nothing is replayed yet.
    pub async fn create_replay_job(&self, new: NewReplayJob) -> Result<ReplayJob, StoreError> {
        let _ = new;
        todo!("create_replay_job")
    }

    pub async fn replay_job(&self, id: uuid::Uuid) -> Result<Option<ReplayJob>, StoreError> {
        let _ = id;
        todo!("replay_job")
    }

    /// The region's jobs, newest first; only unfinished ones if asked.
    pub async fn replay_jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<ReplayJob>, StoreError> {
        let _ = (region, unfinished_only, limit);
        todo!("replay_jobs")
    }

    /// Replays up to `batch` more of the job's tasks in one transaction
    /// with its cursor and count, and marks it finished when none is left.
    /// Safe to call from several processes at once.
    pub async fn advance_replay_job(
        &self,
        id: uuid::Uuid,
        batch: u32,
    ) -> Result<ReplayJob, StoreError> {
        let _ = (id, batch);
        todo!("advance_replay_job")
    }
}
