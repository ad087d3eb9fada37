//! Scheduling many logical webhooks at once: one transaction per chunk,
//! with one multi-row insert for the payloads and one for the tasks. Each
//! task gets the answer `schedule` would have given it on its own: created,
//! a repeat, a conflict, or invalid. A bad task never rejects its
//! neighbours, and a task is either written whole (payload and row) or not
//! at all.

use std::collections::{HashMap, HashSet};

use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::enums::StateColumn;
use super::notify::DUE_WORK_CHANNEL;
use super::rows::TaskRow;
use super::schema::{destinations, payloads, tasks};
use super::{reads, rules, PgStore, Scheduled, StoreError};
use crate::domain::{idempotency_key, NewTask, Region, TaskId, TaskState};

/// Rows per statement: the tasks insert binds eleven values a row, well
/// under PostgreSQL's 65,535 bind parameters.
const CHUNK: usize = 1_000;

/// Each task's own answer, in order.
pub type Answers = Vec<Result<Scheduled, StoreError>>;

pub(super) async fn schedule_many(
    store: &PgStore,
    batch: Vec<NewTask>,
) -> Result<Answers, StoreError> {
    let mut conn = store.conn().await?;
    schedule_many_on(store, &mut conn, batch).await
}

/// As `schedule_many`, on the caller's connection. Inside the caller's
/// transaction the writes (and the wake-up NOTIFY) commit or roll back
/// with it: a product schedules its reminders in the transaction of the
/// business write that created them, and needs no outbox.
pub(super) async fn schedule_many_on(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    batch: Vec<NewTask>,
) -> Result<Answers, StoreError> {
    let mut answers = Vec::with_capacity(batch.len());
    let mut batch = batch.into_iter().peekable();
    while batch.peek().is_some() {
        let chunk: Vec<NewTask> = batch.by_ref().take(CHUNK).collect();
        answers.extend(schedule_chunk(store, conn, chunk).await?);
    }
    Ok(answers)
}

/// A task that passed the checks and is about to be written.
struct Candidate {
    index: usize,
    new: NewTask,
    id: TaskId,
    payload_ref: uuid::Uuid,
}

async fn schedule_chunk(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    chunk: Vec<NewTask>,
) -> Result<Answers, StoreError> {
    // (position in the chunk, answer), put back in order at the end.
    let mut answers: Vec<(usize, Result<Scheduled, StoreError>)> = Vec::with_capacity(chunk.len());
    let regions = destination_regions(conn, &chunk).await?;
    let mut candidates = Vec::new();
    for (index, new) in chunk.into_iter().enumerate() {
        let checked = rules::validate(new).and_then(|new| {
            let region = regions.get(new.destination_id.as_str()).copied();
            rules::check_destination(region, &new).map(|()| new)
        });
        match checked {
            Ok(new) => candidates.push(Candidate {
                index,
                new,
                id: TaskId::generate(),
                payload_ref: uuid::Uuid::now_v7(),
            }),
            Err(invalid) => answers.push((index, Err(invalid.into()))),
        }
    }

    let created = insert(store, conn, &candidates).await?;
    for candidate in candidates {
        let answer = match created.get(&candidate.id) {
            Some(row) => Ok(Scheduled {
                task: row.clone().try_into()?,
                created: true,
            }),
            // Scheduled before, or earlier in this batch: the same request
            // is a repeat, other content a conflict.
            None => repeat_or_conflict(store, conn, &candidate.new).await,
        };
        answers.push((candidate.index, answer));
    }
    answers.sort_by_key(|(index, _)| *index);
    Ok(answers.into_iter().map(|(_, answer)| answer).collect())
}

/// Writes the candidates in one transaction and returns the rows created,
/// by task id. A candidate whose (tenant, reminder) exists already is not
/// inserted, and its payload row is removed again before the commit.
async fn insert(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    candidates: &[Candidate],
) -> Result<HashMap<TaskId, TaskRow>, StoreError> {
    if candidates.is_empty() {
        return Ok(HashMap::new());
    }
    let payload_rows: Vec<_> = candidates
        .iter()
        .map(|c| {
            let sealed = store.key.seal(
                c.payload_ref,
                &c.new.payload.content_type,
                &c.new.payload.body,
            );
            (
                payloads::payload_ref.eq(c.payload_ref),
                payloads::content_type.eq(c.new.payload.content_type.clone()),
                payloads::key_fingerprint.eq(sealed.key_fingerprint),
                payloads::nonce.eq(sealed.nonce),
                payloads::ciphertext.eq(sealed.ciphertext),
            )
        })
        .collect();
    let task_rows: Vec<_> = candidates
        .iter()
        .map(|c| {
            let new = &c.new;
            (
                tasks::id.eq(c.id.0),
                tasks::tenant_id.eq(new.tenant_id.as_str()),
                tasks::reminder_id.eq(new.reminder_id.as_str()),
                tasks::destination_id.eq(new.destination_id.as_str()),
                tasks::region.eq(new.region.as_str()),
                tasks::state.eq(StateColumn(TaskState::Pending)),
                tasks::not_before.eq(new.not_before),
                tasks::available_at.eq(new.not_before),
                tasks::retry_horizon_at.eq(new.not_before + new.retry_horizon),
                tasks::idempotency_key.eq(idempotency_key(&new.tenant_id, &new.reminder_id)),
                tasks::payload_ref.eq(c.payload_ref),
            )
        })
        .collect();
    let regions: HashSet<Region> = candidates.iter().map(|c| c.new.region).collect();
    let inserted: Vec<TaskRow> = conn
        .transaction::<_, diesel::result::Error, _>(async |conn| {
            diesel::insert_into(payloads::table)
                .values(payload_rows)
                .execute(conn)
                .await?;
            let inserted: Vec<TaskRow> = diesel::insert_into(tasks::table)
                .values(task_rows)
                .on_conflict((tasks::tenant_id, tasks::reminder_id))
                .do_nothing()
                .returning(TaskRow::as_returning())
                .get_results(conn)
                .await?;
            let kept: HashSet<uuid::Uuid> = inserted.iter().map(|row| row.payload_ref).collect();
            let orphans: Vec<uuid::Uuid> = candidates
                .iter()
                .map(|c| c.payload_ref)
                .filter(|r| !kept.contains(r))
                .collect();
            if !orphans.is_empty() {
                diesel::delete(payloads::table.filter(payloads::payload_ref.eq_any(orphans)))
                    .execute(conn)
                    .await?;
            }
            // Delivered with the commit: wake each region's claimers once.
            for region in &regions {
                diesel::sql_query("SELECT pg_notify($1, $2)")
                    .bind::<Text, _>(DUE_WORK_CHANNEL)
                    .bind::<Text, _>(region.as_str())
                    .execute(conn)
                    .await?;
            }
            Ok(inserted)
        })
        .await?;
    Ok(inserted
        .into_iter()
        .map(|row| (TaskId(row.id), row))
        .collect())
}

/// The regions of the destinations the chunk names, in one query.
async fn destination_regions(
    conn: &mut AsyncPgConnection,
    chunk: &[NewTask],
) -> Result<HashMap<String, Region>, StoreError> {
    let ids: HashSet<&str> = chunk.iter().map(|n| n.destination_id.as_str()).collect();
    let rows: Vec<(String, String)> = destinations::table
        .filter(destinations::id.eq_any(ids.into_iter().collect::<Vec<_>>()))
        .select((destinations::id, destinations::region))
        .load(conn)
        .await?;
    rows.into_iter()
        .map(|(id, region)| Ok((id, super::rows::region("destinations.region", &region)?)))
        .collect()
}

async fn repeat_or_conflict(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    new: &NewTask,
) -> Result<Scheduled, StoreError> {
    let existing = tasks::table
        .filter(tasks::tenant_id.eq(new.tenant_id.as_str()))
        .filter(tasks::reminder_id.eq(new.reminder_id.as_str()))
        .select(TaskRow::as_select())
        .first(conn)
        .await?;
    let existing: crate::domain::Task = existing.try_into()?;
    let stored = reads::open_payload(store, conn, existing.payload_ref).await?;
    rules::same_or_conflict(existing, &stored, new)
}
