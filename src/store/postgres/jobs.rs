//! Jobs on PostgreSQL (see `contract/jobs.rs`): a bulk replay or
//! cancel is recorded, then worked a batch at a time. Each batch runs in
//! one transaction that holds the job's row lock, so two processes
//! advancing one job take turns and neither counts a task the other
//! replayed or cancelled.
//!
//! A replay's batch is one statement (`REPLAY_BATCH`). A cancel's reads
//! its tasks' ids (`CANCEL_BATCH`), locks their rows and applies
//! `rules::changes::cancel` to each, as `Changes::cancel` does. It waits
//! only for the first row's lock, holding no other, and takes the rest
//! `SKIP LOCKED`, stopping before the first it could not lock (the next
//! batch starts there): a row a claim or a finish holds delays the batch
//! a moment and never deadlocks with it.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::audit;
use super::changes::{locked, tell_holder, write};
use super::connection::notify::DUE_WORK_CHANNEL;
use super::reports::console_sql::{CANCEL_BATCH, REPLAY_BATCH};
use super::tables::rows::TaskRow;
use super::tables::schema::tasks;
use crate::domain::{Region, Task, TaskId};
use crate::store::contract::{check_new_job, Job, JobAction, Jobs, NewJob, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries;
use crate::store::rules::changes::{self, CancelStep};
use crate::store::rules::job_rows::JobColumns;

#[derive(QueryableByName)]
struct JobRow {
    #[diesel(sql_type = Uuid)]
    id: uuid::Uuid,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Text)]
    action: String,
    #[diesel(sql_type = Nullable<Text>)]
    tenant_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    reminder_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    destination_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    failure_reason: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    not_before_from: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    not_before_until: Option<DateTime<Utc>>,
    #[diesel(sql_type = Text)]
    requested_by: String,
    #[diesel(sql_type = BigInt)]
    horizon_seconds: i64,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    replayed: i64,
    #[diesel(sql_type = Nullable<Uuid>)]
    cursor_task_id: Option<uuid::Uuid>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    finished_at: Option<DateTime<Utc>>,
}

impl TryFrom<JobRow> for Job {
    type Error = StoreError;

    fn try_from(r: JobRow) -> Result<Self, StoreError> {
        Job::try_from(JobColumns {
            id: r.id,
            region: r.region,
            action: r.action,
            tenant_id: r.tenant_id,
            reminder_id: r.reminder_id,
            destination_id: r.destination_id,
            failure_reason: r.failure_reason,
            from: r.not_before_from,
            until: r.not_before_until,
            requested_by: r.requested_by,
            horizon_seconds: r.horizon_seconds,
            created_at: r.created_at,
            replayed: r.replayed,
            cursor: r.cursor_task_id,
            finished_at: r.finished_at,
        })
    }
}

const INSERT_SQL: &str = r#"
INSERT INTO replay_jobs (id, region, tenant_id, reminder_id, destination_id, failure_reason,
                         not_before_from, not_before_until, requested_by, horizon_seconds, created_at,
                         action)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, coalesce($11, now()), $12)
RETURNING *
"#;

pub(in crate::store) async fn create(store: &PgStore, new: NewJob) -> Result<Job, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| create_on(store, conn, new).await)
        .await
}

/// Records the job on `conn` with its audit entry, inside a caller's
/// transaction (its own, or a destination's deletion that cancels its
/// live tasks).
pub(in crate::store) async fn create_on(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    new: NewJob,
) -> Result<Job, StoreError> {
    check_new_job(&new)?;
    let job = insert(store, conn, &new).await?;
    audit::record(store, conn, audit_entries::job_created(&job)).await?;
    Ok(job)
}

async fn insert(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    new: &NewJob,
) -> Result<Job, StoreError> {
    let f = &new.filter;
    let row: JobRow = diesel::sql_query(INSERT_SQL)
        .bind::<Uuid, _>(uuid::Uuid::now_v7())
        .bind::<Text, _>(new.region.as_str())
        .bind::<Nullable<Text>, _>(f.tenant.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.reminder.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.destination.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.reason.clone())
        .bind::<Nullable<Timestamptz>, _>(f.from)
        .bind::<Nullable<Timestamptz>, _>(f.until)
        .bind::<Text, _>(&new.requested_by)
        .bind::<BigInt, _>(new.horizon.num_seconds())
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(new.action.as_str())
        .get_result(conn)
        .await?;
    row.try_into()
}

pub(in crate::store) async fn get(
    store: &PgStore,
    id: uuid::Uuid,
) -> Result<Option<Job>, StoreError> {
    let mut conn = store.conn().await?;
    diesel::sql_query("SELECT * FROM replay_jobs WHERE id = $1")
        .bind::<Uuid, _>(id)
        .get_result::<JobRow>(&mut conn)
        .await
        .optional()?
        .map(Job::try_from)
        .transpose()
}

pub(in crate::store) async fn list(
    store: &PgStore,
    region: Region,
    unfinished_only: bool,
    limit: u32,
) -> Result<Vec<Job>, StoreError> {
    let mut conn = store.conn().await?;
    let sql = if unfinished_only {
        "SELECT * FROM replay_jobs WHERE region = $1 AND finished_at IS NULL \
         ORDER BY created_at DESC, id DESC LIMIT $2"
    } else {
        "SELECT * FROM replay_jobs WHERE region = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
    };
    let rows: Vec<JobRow> = diesel::sql_query(sql)
        .bind::<Text, _>(region.as_str())
        .bind::<BigInt, _>(i64::from(limit))
        .load(&mut conn)
        .await?;
    rows.into_iter().map(Job::try_from).collect()
}

#[derive(QueryableByName)]
struct Batch {
    #[diesel(sql_type = BigInt)]
    picked: i64,
    #[diesel(sql_type = Nullable<Uuid>)]
    last: Option<uuid::Uuid>,
    #[diesel(sql_type = BigInt)]
    replayed: i64,
}

#[derive(QueryableByName)]
struct Candidate {
    #[diesel(sql_type = Uuid)]
    id: uuid::Uuid,
}

/// What one batch did.
struct Step {
    /// Tasks replayed or cancelled.
    done: i64,
    /// The last task looked at, the next batch's start.
    last: Option<uuid::Uuid>,
    /// Nothing is left after it.
    finished: bool,
    /// Work may be due sooner: the region's claimers are told.
    wake: bool,
}

const ADVANCE_SQL: &str = r#"
UPDATE replay_jobs
SET replayed = replayed + $2,
    cursor_task_id = coalesce($3, cursor_task_id),
    finished_at = CASE WHEN $4 THEN coalesce($5, now()) END
WHERE id = $1
RETURNING *
"#;

pub(in crate::store) async fn advance(
    store: &PgStore,
    id: uuid::Uuid,
    batch: u32,
) -> Result<Job, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        advance_locked(store, conn, id, batch.max(1)).await
    })
    .await
}

async fn advance_locked(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    id: uuid::Uuid,
    batch: u32,
) -> Result<Job, StoreError> {
    let now = store.clock.now_param();
    let job: Job = diesel::sql_query("SELECT * FROM replay_jobs WHERE id = $1 FOR UPDATE")
        .bind::<Uuid, _>(id)
        .get_result::<JobRow>(conn)
        .await
        .optional()?
        .ok_or_else(|| StoreError::NotFound {
            what: "replay job",
            id: id.to_string(),
        })?
        .try_into()?;
    if job.finished() {
        return Ok(job);
    }
    let step = match job.action {
        JobAction::Replay => replay_batch(conn, &job, batch, now).await?,
        JobAction::Cancel => {
            let now = super::store_now::now(store, conn).await?;
            cancel_batch(conn, &job, batch, now).await?
        }
    };
    if step.wake {
        // Claimers that listen poll at once, as after a schedule.
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<Text, _>(DUE_WORK_CHANNEL)
            .bind::<Text, _>(job.region.as_str())
            .execute(conn)
            .await?;
    }
    let row: JobRow = diesel::sql_query(ADVANCE_SQL)
        .bind::<Uuid, _>(id)
        .bind::<BigInt, _>(step.done)
        .bind::<Nullable<Uuid>, _>(step.last)
        .bind::<diesel::sql_types::Bool, _>(step.finished)
        .bind::<Nullable<Timestamptz>, _>(now)
        .get_result(conn)
        .await?;
    row.try_into()
}

/// Replays the batch in one statement.
async fn replay_batch(
    conn: &mut AsyncPgConnection,
    job: &Job,
    batch: u32,
    now: Option<DateTime<Utc>>,
) -> Result<Step, StoreError> {
    let f = &job.filter;
    let done: Batch = diesel::sql_query(REPLAY_BATCH)
        .bind::<Text, _>(job.region.as_str())
        .bind::<Uuid, _>(job.cursor.map(|c| c.0).unwrap_or(uuid::Uuid::nil()))
        .bind::<Timestamptz, _>(job.created_at)
        .bind::<Nullable<Text>, _>(f.tenant.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.reminder.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.destination.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.reason.clone())
        .bind::<Nullable<Timestamptz>, _>(f.from)
        .bind::<Nullable<Timestamptz>, _>(f.until)
        .bind::<BigInt, _>(i64::from(batch))
        .bind::<BigInt, _>(job.horizon.num_milliseconds())
        .bind::<Nullable<Timestamptz>, _>(now)
        .get_result(conn)
        .await?;
    Ok(Step {
        done: done.replayed,
        last: done.last,
        finished: done.picked < i64::from(batch),
        wake: done.replayed > 0,
    })
}

/// Cancels the batch row by row, each by the cancel's rule, under the
/// row's lock (see the module's documentation for the order they are
/// taken in).
async fn cancel_batch(
    conn: &mut AsyncPgConnection,
    job: &Job,
    batch: u32,
    now: DateTime<Utc>,
) -> Result<Step, StoreError> {
    let f = &job.filter;
    let candidates: Vec<uuid::Uuid> = diesel::sql_query(CANCEL_BATCH)
        .bind::<Text, _>(job.region.as_str())
        .bind::<Uuid, _>(job.cursor.map(|c| c.0).unwrap_or(uuid::Uuid::nil()))
        .bind::<Timestamptz, _>(job.created_at)
        .bind::<Nullable<Text>, _>(f.tenant.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.reminder.as_ref().map(ToString::to_string))
        .bind::<Nullable<Text>, _>(f.destination.as_ref().map(ToString::to_string))
        .bind::<Nullable<Timestamptz>, _>(f.from)
        .bind::<Nullable<Timestamptz>, _>(f.until)
        .bind::<BigInt, _>(i64::from(batch))
        .load::<Candidate>(conn)
        .await?
        .into_iter()
        .map(|c| c.id)
        .collect();
    let Some((&first, rest)) = candidates.split_first() else {
        return Ok(Step {
            done: 0,
            last: None,
            finished: true,
            wake: false,
        });
    };
    // The first row waited for, holding no other row's lock; the rest as
    // they are free.
    let mut head = locked(conn, TaskId(first)).await?;
    let mut free: HashMap<uuid::Uuid, Task> = tasks::table
        .filter(tasks::id.eq_any(rest))
        .order(tasks::id)
        .select(TaskRow::as_select())
        .for_update()
        .skip_locked()
        .load::<TaskRow>(conn)
        .await?
        .into_iter()
        .map(|row| Task::try_from(row).map(|task| (task.id.0, task)))
        .collect::<Result<_, StoreError>>()?;
    let mut step = Step {
        done: 0,
        last: None,
        finished: false,
        wake: false,
    };
    let mut looked_at = 0;
    for (n, id) in candidates.iter().enumerate() {
        let task = if n == 0 {
            // Gone since the read (pruned): passed.
            head.take()
        } else {
            // Held by another transaction (or gone): the batch ends
            // before it, and the next one starts there.
            let Some(task) = free.remove(id) else { break };
            Some(task)
        };
        looked_at += 1;
        step.last = Some(*id);
        let Some(mut task) = task else { continue };
        match changes::cancel(&mut task, &job.requested_by, now) {
            CancelStep::Now => {
                // The task behind it in its line may go now.
                step.wake |= task.ordering_key.is_some();
            }
            CancelStep::AfterAttempt => tell_holder(conn, &task).await?,
            CancelStep::Repeat | CancelStep::Ended => continue,
        }
        write(conn, &task).await?;
        step.done += 1;
    }
    step.finished = candidates.len() < batch as usize && looked_at == candidates.len();
    Ok(step)
}

impl Jobs for PgStore {
    async fn create_job(&self, new: NewJob) -> Result<Job, StoreError> {
        self::create(self, new).await
    }

    async fn job(&self, id: uuid::Uuid) -> Result<Option<Job>, StoreError> {
        self::get(self, id).await
    }

    async fn jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        self::list(self, region, unfinished_only, limit).await
    }

    async fn advance_job(&self, id: uuid::Uuid, batch: u32) -> Result<Job, StoreError> {
        self::advance(self, id, batch).await
    }
}
