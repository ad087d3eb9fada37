//! `Schedule`: what a product hands remit (logical webhooks, each
//! idempotent on its tenant and reminder) and what it reads back of them:
//! the task, its attempt log, its payload, and a replay of one that failed.

use std::future::Future;

use chrono::Duration;

use super::calls::Replayed;
use super::calls::Scheduled;
use super::error::StoreError;
use crate::domain::{Attempt, NewTask, Payload, Task, TaskId};

pub trait Schedule: Sync {
    /// Schedules one logical webhook; idempotent on (tenant, reminder). A
    /// batch of one: its answer, or the store's failure.
    fn schedule(&self, new: NewTask) -> impl Future<Output = Result<Scheduled, StoreError>> + Send {
        async move {
            let mut answers = self.schedule_many(vec![new]).await?;
            answers
                .pop()
                .unwrap_or_else(|| Err(StoreError::Thread("no answer for the task".into())))
        }
    }

    /// Schedules many at once, each idempotent on (tenant, reminder): the
    /// same request again is a repeat (`created` false), other content
    /// under the same (tenant, reminder) a `Conflict`. Each task gets its
    /// own answer, in order (an `Invalid` or `Conflict` of its own never
    /// affects its neighbours); the call itself fails only when the store
    /// does, and then writes nothing half-done for any task.
    fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> impl Future<Output = Result<Vec<Result<Scheduled, StoreError>>, StoreError>> + Send;

    fn task(&self, id: TaskId) -> impl Future<Output = Result<Option<Task>, StoreError>> + Send;

    /// The task's attempt log, oldest first.
    fn attempts(&self, id: TaskId)
        -> impl Future<Output = Result<Vec<Attempt>, StoreError>> + Send;

    /// The decrypted body of a task.
    fn payload(&self, task: &Task) -> impl Future<Output = Result<Payload, StoreError>> + Send;

    /// Sends a failed task round again with a fresh horizon.
    fn replay(
        &self,
        id: TaskId,
        horizon: Duration,
    ) -> impl Future<Output = Result<Replayed, StoreError>> + Send;
}
