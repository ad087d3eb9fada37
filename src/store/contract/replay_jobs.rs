//! `ReplayJobs`: a bulk replay as a durable job, recorded first and then
//! advanced in batches by whichever process gets to it, so a restart
//! loses nothing and two processes never replay a task twice.

use std::future::Future;

use crate::domain::Region;
use crate::store::console::{NewReplayJob, ReplayJob};
use crate::store::StoreError;

pub trait ReplayJobs: Sync {
    /// Records a bulk replay; nothing is replayed yet.
    fn create_replay_job(
        &self,
        new: NewReplayJob,
    ) -> impl Future<Output = Result<ReplayJob, StoreError>> + Send;

    fn replay_job(
        &self,
        id: uuid::Uuid,
    ) -> impl Future<Output = Result<Option<ReplayJob>, StoreError>> + Send;

    /// The region's jobs, newest first; only unfinished ones if asked.
    fn replay_jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<ReplayJob>, StoreError>> + Send;

    /// Replays up to `batch` more of the job's tasks in one transaction
    /// with its cursor and count, and marks it finished when none is left.
    /// Safe to call from several processes at once.
    fn advance_replay_job(
        &self,
        id: uuid::Uuid,
        batch: u32,
    ) -> impl Future<Output = Result<ReplayJob, StoreError>> + Send;
}
