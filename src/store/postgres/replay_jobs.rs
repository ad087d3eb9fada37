//! Replay jobs on PostgreSQL (see `store::console`): a bulk replay is
//! recorded, then worked a batch at a time. Each batch runs in one
//! transaction that holds the job's row lock, so two processes advancing
//! one job take turns and neither counts a task the other replayed.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::console_sql::REPLAY_BATCH;
use super::notify::DUE_WORK_CHANNEL;
use super::{PgStore, StoreError};
use crate::domain::Region;
use crate::store::console::{check_new_job, JobColumns, NewReplayJob, ReplayJob};

#[derive(QueryableByName)]
struct JobRow {
    #[diesel(sql_type = Uuid)]
    id: uuid::Uuid,
    #[diesel(sql_type = Text)]
    region: String,
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

impl TryFrom<JobRow> for ReplayJob {
    type Error = StoreError;

    fn try_from(r: JobRow) -> Result<Self, StoreError> {
        ReplayJob::try_from(JobColumns {
            id: r.id,
            region: r.region,
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
                         not_before_from, not_before_until, requested_by, horizon_seconds, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, coalesce($11, now()))
RETURNING *
"#;

pub(in crate::store) async fn create(
    store: &PgStore,
    new: NewReplayJob,
) -> Result<ReplayJob, StoreError> {
    check_new_job(&new)?;
    let mut conn = store.conn().await?;
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
        .get_result(&mut conn)
        .await?;
    row.try_into()
}

pub(in crate::store) async fn get(
    store: &PgStore,
    id: uuid::Uuid,
) -> Result<Option<ReplayJob>, StoreError> {
    let mut conn = store.conn().await?;
    diesel::sql_query("SELECT * FROM replay_jobs WHERE id = $1")
        .bind::<Uuid, _>(id)
        .get_result::<JobRow>(&mut conn)
        .await
        .optional()?
        .map(ReplayJob::try_from)
        .transpose()
}

pub(in crate::store) async fn list(
    store: &PgStore,
    region: Region,
    unfinished_only: bool,
    limit: u32,
) -> Result<Vec<ReplayJob>, StoreError> {
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
    rows.into_iter().map(ReplayJob::try_from).collect()
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
) -> Result<ReplayJob, StoreError> {
    let mut conn = store.conn().await?;
    let now = store.clock.now_param();
    conn.transaction::<_, StoreError, _>(async |conn| {
        advance_locked(conn, id, batch.max(1), now).await
    })
    .await
}

async fn advance_locked(
    conn: &mut AsyncPgConnection,
    id: uuid::Uuid,
    batch: u32,
    now: Option<DateTime<Utc>>,
) -> Result<ReplayJob, StoreError> {
    let job: ReplayJob = diesel::sql_query("SELECT * FROM replay_jobs WHERE id = $1 FOR UPDATE")
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
    if done.replayed > 0 {
        // Claimers that listen poll at once, as after a schedule.
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<Text, _>(DUE_WORK_CHANNEL)
            .bind::<Text, _>(job.region.as_str())
            .execute(conn)
            .await?;
    }
    let row: JobRow = diesel::sql_query(ADVANCE_SQL)
        .bind::<Uuid, _>(id)
        .bind::<BigInt, _>(done.replayed)
        .bind::<Nullable<Uuid>, _>(done.last)
        .bind::<diesel::sql_types::Bool, _>(done.picked < i64::from(batch))
        .bind::<Nullable<Timestamptz>, _>(now)
        .get_result(conn)
        .await?;
    row.try_into()
}
