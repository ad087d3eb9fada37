//! `Schedule` on PostgreSQL: each call into the file that holds its
//! statements (`schedule_many`, `reads`, `replay`).
//!
//! # Layout
//! - `schedule_many`: tasks written in batches, idempotent on (tenant,
//!   reminder).
//! - `reads`: a task, its attempts, its payload; the ping.
//! - `replay`: a failed task sent round again.

pub(super) mod reads;
pub(super) mod replay;
pub(super) mod schedule_many;

use crate::domain::{Attempt, NewTask, Payload, Task, TaskId};
use crate::store::contract::{Replayed, Schedule, Scheduled, StoreError};
use crate::store::postgres::store::PgStore;
use chrono::Duration;

impl Schedule for PgStore {
    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        schedule_many::schedule_many(self, batch).await
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        reads::task(self, id).await
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        reads::attempts(self, id).await
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        replay::replay(self, id, horizon).await
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        reads::payload(self, task).await
    }
}
