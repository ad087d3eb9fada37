//! Scheduling on SQLite: each task of a batch is checked, compared with an
//! existing task of the same (tenant, reminder) and written with its sealed
//! payload, by the same rules as the other stores, in one transaction.

use super::audit;
use super::claim;
use super::finish;
use super::payload_rows;
use super::store::Ctx;
use super::store::SqliteStore;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::rows::{self, destination_row, TaskRow, TASK_COLUMNS};
use crate::domain::{Attempt, AuditAction, NewTask, Payload, Task, TaskId};
use crate::store::contract::{Replayed, Schedule, Scheduled, StoreError, Wakeup};
use crate::store::rules::audit_entries::task_changed;
use crate::store::{rules::lifecycle, rules::requests};
use chrono::Duration;

pub(super) fn schedule_many(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    batch: Vec<NewTask>,
) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
    let mut answers = Vec::with_capacity(batch.len());
    for new in batch {
        answers.push(match schedule_one(conn, ctx, new) {
            // The task's own answer: bad input, a conflicting repeat, or a
            // repeat whose stored payload this key cannot open.
            Err(
                e @ (StoreError::Invalid(_) | StoreError::Conflict { .. } | StoreError::Payload(_)),
            ) => Err(e),
            Err(e) => return Err(e),
            Ok(scheduled) => Ok(scheduled),
        });
    }
    Ok(answers)
}

fn schedule_one(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    new: NewTask,
) -> Result<Scheduled, StoreError> {
    let new = requests::validate(new)?;
    let region = destination_row(conn, &new.destination_id)?
        .map(|row| row.destination())
        .transpose()?
        .map(|d| d.region);
    requests::check_destination(region, &new)?;
    let existing: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND reminder_id = ?"
    ))
    .bind::<Text, _>(new.tenant_id.as_str())
    .bind::<Text, _>(new.reminder_id.as_str())
    .load(conn)?;
    if let Some(existing) = rows::tasks(existing)?.pop() {
        if existing.payload_erased_at.is_some() {
            return requests::erased_conflict(existing, &new);
        }
        let stored = open(conn, ctx, existing.payload_ref)?;
        return requests::same_or_conflict(existing, &stored, &new);
    }
    let id = TaskId::generate();
    let payload_ref = uuid::Uuid::now_v7();
    let sealed = ctx
        .key
        .seal(payload_ref, &new.payload.content_type, &new.payload.body);
    payload_rows::insert_payload(
        conn,
        payload_ref,
        &new.payload.content_type,
        &sealed,
        ctx.now,
    )?;
    let task = lifecycle::new_task(id, payload_ref, new, ctx.now);
    rows::insert_task(conn, &task)?;
    Ok(Scheduled {
        task,
        created: true,
    })
}

fn open(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    payload_ref: uuid::Uuid,
) -> Result<Payload, StoreError> {
    super::claim::open_payload(conn, &ctx.key, payload_ref)
}

impl Schedule for SqliteStore {
    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        let answers = self
            .run(true, move |conn, ctx| self::schedule_many(conn, ctx, batch))
            .await?;
        let mut woken = Vec::new();
        for scheduled in answers.iter().flatten().filter(|s| s.created) {
            if !woken.contains(&scheduled.task.region) {
                woken.push(scheduled.task.region);
                self.wake(Wakeup::DueWork(scheduled.task.region));
            }
        }
        Ok(answers)
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        self.run(false, move |conn, _| rows::task(conn, id)).await
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        self.run(false, move |conn, _| finish::attempts(conn, id))
            .await
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        self.run(true, move |conn, ctx| {
            let before = rows::task(conn, id)?;
            let replayed = finish::replay(conn, id, horizon, ctx.now)?;
            if let (Some(before), Replayed::Replayed(after)) = (&before, &replayed) {
                let entry = task_changed(AuditAction::TaskReplay, before, after);
                audit::record(conn, ctx, entry)?;
            }
            Ok(replayed)
        })
        .await
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        let task = task.clone();
        self.run(false, move |conn, ctx| {
            claim::task_payload(conn, &ctx.key, &task)
        })
        .await
    }
}
