//! Scheduling on SQLite: each task of a batch is checked, compared with an
//! existing task of the same (tenant, reminder) and written with its sealed
//! payload, by the same rules as the other stores, in one transaction.

use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::payload_rows;
use super::rows::{self, destination_row, TaskRow, TASK_COLUMNS};
use super::Ctx;
use crate::domain::{NewTask, Payload, TaskId};
use crate::store::{rules::lifecycle, rules::requests, Scheduled, StoreError};

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
