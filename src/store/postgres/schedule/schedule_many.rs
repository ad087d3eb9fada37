//! Scheduling many logical webhooks at once: one statement per chunk that
//! inserts the tasks and their payloads from arrays. Each
//! task gets the answer `schedule` would have given it on its own: created,
//! a repeat, a conflict, or invalid. A bad task never rejects its
//! neighbours, and a task is either written whole (payload and row) or not
//! at all.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bytea, Nullable, Text, Timestamptz, Uuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::connection::notify::DUE_WORK_CHANNEL;
use super::super::connection::prepared::prepared;
use super::super::schedule::reads;
use super::super::tables::rows::TaskRow;
use super::super::tables::schema::{destinations, tasks};
use crate::domain::{idempotency_key, NewTask, Region, TaskId};
use crate::store::contract::{Scheduled, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::requests;

/// Tasks per statement: arrays have no bind limit, but a chunk bounds how
/// long one statement holds the rows it inserts.
const CHUNK: usize = 1_000;

/// Each task's own answer, in order.
pub type Answers = Vec<Result<Scheduled, StoreError>>;

pub(in crate::store::postgres) async fn schedule_many(
    store: &PgStore,
    batch: Vec<NewTask>,
) -> Result<Answers, StoreError> {
    let mut conn = store.conn().await?;
    store.schedule_many_on(&mut conn, batch).await
}

impl PgStore {
    /// Schedules `batch` on the caller's connection, each task answered as
    /// [`Schedule::schedule_many`](crate::store::Schedule::schedule_many)
    /// answers it. Inside the caller's transaction the writes (and the
    /// wake-up NOTIFY) commit or roll back with it: a product schedules its
    /// reminders in the transaction of the business write that created
    /// them, and needs no outbox.
    pub async fn schedule_many_on(
        &self,
        conn: &mut AsyncPgConnection,
        batch: Vec<NewTask>,
    ) -> Result<Answers, StoreError> {
        let mut answers = Vec::with_capacity(batch.len());
        let mut batch = batch.into_iter().peekable();
        while batch.peek().is_some() {
            let chunk: Vec<NewTask> = batch.by_ref().take(CHUNK).collect();
            answers.extend(schedule_chunk(self, conn, chunk).await?);
        }
        Ok(answers)
    }
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
        let checked = requests::validate(new).and_then(|new| {
            let region = regions.get(new.destination_id.as_str()).copied();
            requests::check_destination(region, &new).map(|()| new)
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

/// Writes the candidates and returns the rows created, by task id, in one
/// statement over arrays (so PostgreSQL plans it once per connection, and
/// the bind count does not grow with the batch). A task whose (tenant,
/// reminder) exists already, or came earlier in the same batch, is not
/// inserted, and neither is its payload: payloads are written only for the
/// tasks that were. The tasks' foreign key to their payloads is checked at
/// the end of the statement, when both are in. Each region with new work
/// gets one wake-up, delivered with the commit.
pub const INSERT_MANY_SQL: &str = r#"
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[],
                         $6::timestamptz[], $7::timestamptz[], $8::text[], $9::uuid[],
                         $10::text[], $11::bytea[], $12::bytea[], $13::bytea[], $14::text[],
                         $15::text[])
        AS i(id, tenant_id, reminder_id, destination_id, region, not_before, retry_horizon_at,
             idempotency_key, payload_ref, content_type, key_fingerprint, nonce, ciphertext,
             ordering_key, traceparent)
),
-- The store's clock (the database's unless a test pinned it), as every
-- transition stamps its rows.
clock AS (SELECT coalesce($16::timestamptz, now()) AS now),
inserted AS (
    INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, not_before,
                       available_at, retry_horizon_at, idempotency_key, payload_ref,
                       ordering_key, traceparent, created_at, updated_at)
    SELECT i.id, i.tenant_id, i.reminder_id, i.destination_id, i.region, 'pending',
           i.not_before, i.not_before, i.retry_horizon_at, i.idempotency_key, i.payload_ref,
           i.ordering_key, i.traceparent, clock.now, clock.now
    FROM input i, clock
    ON CONFLICT (tenant_id, reminder_id) DO NOTHING
    RETURNING id, tenant_id, reminder_id, destination_id, region, state, not_before,
              available_at, retry_horizon_at, lease_token, lease_owner, lease_expires_at,
              attempt_count, idempotency_key, payload_ref, last_status, failure_reason,
              created_at, updated_at, delivered_at, finalized_at, attempts_before_replay,
              ordering_key, traceparent, cancelled_at, cancelled_by, waiting_change, move_to,
              payload_erased_at
),
sealed AS (
    INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext)
    SELECT i.payload_ref, i.content_type, i.key_fingerprint, i.nonce, i.ciphertext
    FROM input i JOIN inserted USING (payload_ref)
)
SELECT inserted.*,
       (SELECT count(pg_notify($17, r.region)) FROM (SELECT DISTINCT region FROM inserted) r)
           AS woken
FROM inserted
"#;

#[derive(QueryableByName)]
struct InsertedRow {
    #[diesel(embed)]
    task: TaskRow,
    #[diesel(sql_type = BigInt)]
    #[allow(dead_code)] // read only for its side effect, the wake-ups
    woken: i64,
}

/// The columns of `INSERT_MANY_SQL`'s input, one vector per array.
#[derive(Default)]
struct Columns {
    ids: Vec<uuid::Uuid>,
    tenants: Vec<String>,
    reminders: Vec<String>,
    destinations: Vec<String>,
    regions: Vec<String>,
    not_before: Vec<DateTime<Utc>>,
    horizons: Vec<DateTime<Utc>>,
    keys: Vec<String>,
    payload_refs: Vec<uuid::Uuid>,
    content_types: Vec<String>,
    fingerprints: Vec<Vec<u8>>,
    nonces: Vec<Vec<u8>>,
    ciphertexts: Vec<Vec<u8>>,
    ordering_keys: Vec<Option<String>>,
    traceparents: Vec<Option<String>>,
}

impl Columns {
    /// Seals each payload (under the payload ref it is stored with) and
    /// lays the candidates out column by column.
    fn of(store: &PgStore, candidates: &[Candidate]) -> Self {
        let mut columns = Columns::default();
        for c in candidates {
            let new = &c.new;
            let sealed =
                store
                    .key
                    .seal(c.payload_ref, &new.payload.content_type, &new.payload.body);
            columns.ids.push(c.id.0);
            columns.tenants.push(new.tenant_id.as_str().to_owned());
            columns.reminders.push(new.reminder_id.as_str().to_owned());
            columns
                .destinations
                .push(new.destination_id.as_str().to_owned());
            columns.regions.push(new.region.as_str().to_owned());
            columns.not_before.push(new.not_before);
            columns.horizons.push(new.not_before + new.retry_horizon);
            columns
                .keys
                .push(idempotency_key(&new.tenant_id, &new.reminder_id));
            columns.payload_refs.push(c.payload_ref);
            columns.content_types.push(new.payload.content_type.clone());
            columns.fingerprints.push(sealed.key_fingerprint);
            columns.nonces.push(sealed.nonce);
            columns.ciphertexts.push(sealed.ciphertext);
            columns
                .ordering_keys
                .push(new.ordering_key.as_ref().map(|k| k.as_str().to_owned()));
            columns
                .traceparents
                .push(new.traceparent.as_ref().map(|t| t.as_str().to_owned()));
        }
        columns
    }
}

async fn insert(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    candidates: &[Candidate],
) -> Result<HashMap<TaskId, TaskRow>, StoreError> {
    if candidates.is_empty() {
        return Ok(HashMap::new());
    }
    let c = Columns::of(store, candidates);
    let inserted: Vec<InsertedRow> = prepared(INSERT_MANY_SQL)
        .bind::<Array<Uuid>, _>(c.ids)
        .bind::<Array<Text>, _>(c.tenants)
        .bind::<Array<Text>, _>(c.reminders)
        .bind::<Array<Text>, _>(c.destinations)
        .bind::<Array<Text>, _>(c.regions)
        .bind::<Array<Timestamptz>, _>(c.not_before)
        .bind::<Array<Timestamptz>, _>(c.horizons)
        .bind::<Array<Text>, _>(c.keys)
        .bind::<Array<Uuid>, _>(c.payload_refs)
        .bind::<Array<Text>, _>(c.content_types)
        .bind::<Array<Bytea>, _>(c.fingerprints)
        .bind::<Array<Bytea>, _>(c.nonces)
        .bind::<Array<Bytea>, _>(c.ciphertexts)
        .bind::<Array<Nullable<Text>>, _>(c.ordering_keys)
        .bind::<Array<Nullable<Text>>, _>(c.traceparents)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(DUE_WORK_CHANNEL)
        .load(conn)
        .await?;
    Ok(inserted
        .into_iter()
        .map(|row| (TaskId(row.task.id), row.task))
        .collect())
}

/// The regions of the destinations the chunk names, in one query (a
/// deleted one is not there).
async fn destination_regions(
    conn: &mut AsyncPgConnection,
    chunk: &[NewTask],
) -> Result<HashMap<String, Region>, StoreError> {
    let ids: HashSet<&str> = chunk.iter().map(|n| n.destination_id.as_str()).collect();
    // Under a share lock, as the tasks' foreign key takes anyway: a
    // deletion committing meanwhile is waited for, and its tombstone seen.
    let rows: Vec<(String, String)> = destinations::table
        .filter(destinations::id.eq_any(ids.into_iter().collect::<Vec<_>>()))
        .filter(destinations::deleted_at.is_null())
        .select((destinations::id, destinations::region))
        .for_key_share()
        .load(conn)
        .await?;
    rows.into_iter()
        .map(|(id, region)| {
            Ok((
                id,
                super::super::tables::rows::region("destinations.region", &region)?,
            ))
        })
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
    if existing.payload_erased_at.is_some() {
        // Nothing to compare with: a conflict of this task alone.
        return requests::erased_conflict(existing, new);
    }
    let stored = reads::open_payload(store, conn, existing.payload_ref).await?;
    requests::same_or_conflict(existing, &stored, new)
}
