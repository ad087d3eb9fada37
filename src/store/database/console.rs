//! The console's reads and the replay jobs, each passed to the backend.

use super::Database;
use crate::domain::{Region, TaskId};
use crate::store::console::MAX_PAGE;
use crate::store::console::{
    Activity, DestinationSummary, NewReplayJob, ReplayJob, TaskFilter, TaskPage,
};
use crate::store::{postgres, StoreError};

impl Database {
    /// Up to `limit` tasks of `region` matching `filter`, newest first,
    /// starting below `before`. `limit` is held within 1..=`MAX_PAGE`.
    pub async fn search_tasks(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        match self {
            Database::Postgres(pg) => {
                postgres::console::search_tasks(pg, region, filter, before, limit).await
            }
            Database::Sqlite(lite) => {
                lite.search_tasks(region, filter.clone(), before, limit)
                    .await
            }
        }
    }

    /// Every destination of `region`, by id, with its counts.
    pub async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::console::destination_summaries(pg, region).await,
            Database::Sqlite(lite) => lite.destination_summaries(region).await,
        }
    }

    /// The region's last hour, minute by minute.
    pub async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::console::activity(pg, region).await,
            Database::Sqlite(lite) => lite.activity(region).await,
        }
    }

    /// Records a bulk replay; nothing is replayed yet.
    pub async fn create_replay_job(&self, new: NewReplayJob) -> Result<ReplayJob, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::replay_jobs::create(pg, new).await,
            Database::Sqlite(lite) => lite.create_replay_job(new).await,
        }
    }

    pub async fn replay_job(&self, id: uuid::Uuid) -> Result<Option<ReplayJob>, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::replay_jobs::get(pg, id).await,
            Database::Sqlite(lite) => lite.replay_job(id).await,
        }
    }

    /// The region's jobs, newest first; only unfinished ones if asked.
    pub async fn replay_jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<ReplayJob>, StoreError> {
        match self {
            Database::Postgres(pg) => {
                postgres::replay_jobs::list(pg, region, unfinished_only, limit).await
            }
            Database::Sqlite(lite) => lite.replay_jobs(region, unfinished_only, limit).await,
        }
    }

    /// Replays up to `batch` more of the job's tasks in one transaction
    /// with its cursor and count, and marks it finished when none is left.
    /// Safe to call from several processes at once.
    pub async fn advance_replay_job(
        &self,
        id: uuid::Uuid,
        batch: u32,
    ) -> Result<ReplayJob, StoreError> {
        match self {
            Database::Postgres(pg) => postgres::replay_jobs::advance(pg, id, batch).await,
            Database::Sqlite(lite) => lite.advance_replay_job(id, batch).await,
        }
    }
}
