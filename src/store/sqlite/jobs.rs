//! Jobs on SQLite (see `contract/jobs.rs`). A batch reads its tasks,
//! replays each with `lifecycle::replay` (the one-task replay's rule) or
//! cancels it with `changes::cancel` (the one-task cancel's), and moves
//! the job's cursor and count, all in one `BEGIN IMMEDIATE` transaction:
//! two processes advancing one job take turns on the file's write lock,
//! and the second reads the cursor the first left.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::audit;
use super::rows::{self, maybe, micros, uuid, TaskRow, TASK_COLUMNS};
use super::store::SqliteStore;
use crate::domain::{Region, Task};
use crate::store::contract::{check_new_job, Job, JobAction, Jobs, NewJob, StoreError, Wakeup};
use crate::store::rules::changes::{self, CancelStep};
use crate::store::rules::job_rows::JobColumns;
use crate::store::rules::{audit_entries, lifecycle};

#[derive(QueryableByName)]
struct JobRow {
    #[diesel(sql_type = Text)]
    id: String,
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
    #[diesel(sql_type = Nullable<BigInt>)]
    not_before_from: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    not_before_until: Option<i64>,
    #[diesel(sql_type = Text)]
    requested_by: String,
    #[diesel(sql_type = BigInt)]
    horizon_seconds: i64,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = BigInt)]
    replayed: i64,
    #[diesel(sql_type = Nullable<Text>)]
    cursor_task_id: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    finished_at: Option<i64>,
}

impl TryFrom<JobRow> for Job {
    type Error = StoreError;

    fn try_from(r: JobRow) -> Result<Self, StoreError> {
        Job::try_from(JobColumns {
            id: uuid("replay_jobs.id", &r.id)?,
            region: r.region,
            action: r.action,
            tenant_id: r.tenant_id,
            reminder_id: r.reminder_id,
            destination_id: r.destination_id,
            failure_reason: r.failure_reason,
            from: maybe("replay_jobs.not_before_from", r.not_before_from)?,
            until: maybe("replay_jobs.not_before_until", r.not_before_until)?,
            requested_by: r.requested_by,
            horizon_seconds: r.horizon_seconds,
            created_at: rows::instant("replay_jobs.created_at", r.created_at)?,
            replayed: r.replayed,
            cursor: r
                .cursor_task_id
                .map(|c| uuid("replay_jobs.cursor_task_id", &c))
                .transpose()?,
            finished_at: maybe("replay_jobs.finished_at", r.finished_at)?,
        })
    }
}

fn job(conn: &mut SqliteConnection, id: uuid::Uuid) -> Result<Option<Job>, StoreError> {
    let mut found: Vec<JobRow> = diesel::sql_query("SELECT * FROM replay_jobs WHERE id = ?")
        .bind::<Text, _>(id.to_string())
        .load(conn)?;
    found.pop().map(Job::try_from).transpose()
}

/// A replay's next batch: the region's failed tasks after the cursor that
/// ended by the job's creation and match its filter, in id order
/// (`tasks_failed`).
const BATCH_SQL: &str = "SELECT {COLUMNS} FROM tasks \
     WHERE region = ?1 AND state = 'failed' AND id > ?2 AND finalized_at <= ?3 \
       AND (?4 IS NULL OR tenant_id = ?4) AND (?5 IS NULL OR reminder_id = ?5) \
       AND (?6 IS NULL OR destination_id = ?6) AND (?7 IS NULL OR failure_reason = ?7) \
       AND (?8 IS NULL OR not_before >= ?8) AND (?9 IS NULL OR not_before < ?9) \
     ORDER BY id LIMIT ?10";

/// A cancel's next batch: the region's tasks after the cursor that have
/// not ended, were scheduled by the job's creation and match its filter
/// (which has no reason), in id order.
const CANCEL_BATCH_SQL: &str = "SELECT {COLUMNS} FROM tasks \
     WHERE region = ?1 AND state IN ('pending', 'leased', 'retry_wait') AND id > ?2 \
       AND created_at <= ?3 \
       AND (?4 IS NULL OR tenant_id = ?4) AND (?5 IS NULL OR reminder_id = ?5) \
       AND (?6 IS NULL OR destination_id = ?6) \
       AND (?7 IS NULL OR not_before >= ?7) AND (?8 IS NULL OR not_before < ?8) \
     ORDER BY id LIMIT ?9";

/// The job's next batch, in id order.
fn next_batch(conn: &mut SqliteConnection, job: &Job, batch: u32) -> Result<Vec<Task>, StoreError> {
    let f = &job.filter;
    let cursor = job
        .cursor
        .map(|c| c.0)
        .unwrap_or(uuid::Uuid::nil())
        .to_string();
    let found: Vec<TaskRow> = match job.action {
        JobAction::Replay => diesel::sql_query(BATCH_SQL.replace("{COLUMNS}", TASK_COLUMNS))
            .bind::<Text, _>(job.region.as_str())
            .bind::<Text, _>(cursor)
            .bind::<BigInt, _>(micros(job.created_at))
            .bind::<Nullable<Text>, _>(f.tenant.as_ref().map(ToString::to_string))
            .bind::<Nullable<Text>, _>(f.reminder.as_ref().map(ToString::to_string))
            .bind::<Nullable<Text>, _>(f.destination.as_ref().map(ToString::to_string))
            .bind::<Nullable<Text>, _>(f.reason.clone())
            .bind::<Nullable<BigInt>, _>(f.from.map(micros))
            .bind::<Nullable<BigInt>, _>(f.until.map(micros))
            .bind::<BigInt, _>(i64::from(batch))
            .load(conn)?,
        JobAction::Cancel => diesel::sql_query(CANCEL_BATCH_SQL.replace("{COLUMNS}", TASK_COLUMNS))
            .bind::<Text, _>(job.region.as_str())
            .bind::<Text, _>(cursor)
            .bind::<BigInt, _>(micros(job.created_at))
            .bind::<Nullable<Text>, _>(f.tenant.as_ref().map(ToString::to_string))
            .bind::<Nullable<Text>, _>(f.reminder.as_ref().map(ToString::to_string))
            .bind::<Nullable<Text>, _>(f.destination.as_ref().map(ToString::to_string))
            .bind::<Nullable<BigInt>, _>(f.from.map(micros))
            .bind::<Nullable<BigInt>, _>(f.until.map(micros))
            .bind::<BigInt, _>(i64::from(batch))
            .load(conn)?,
    };
    rows::tasks(found)
}

/// Records a job already checked (`check_new_job`), in the caller's
/// transaction (a destination deleted with its live tasks cancelled).
pub(super) fn record_job(
    conn: &mut SqliteConnection,
    new: &NewJob,
    now: DateTime<Utc>,
) -> Result<Job, StoreError> {
    let id = uuid::Uuid::now_v7();
    let f = &new.filter;
    diesel::sql_query(
        "INSERT INTO replay_jobs (id, region, action, tenant_id, reminder_id, \
         destination_id, failure_reason, not_before_from, not_before_until, \
         requested_by, horizon_seconds, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
    )
    .bind::<Text, _>(id.to_string())
    .bind::<Text, _>(new.region.as_str())
    .bind::<Text, _>(new.action.as_str())
    .bind::<Nullable<Text>, _>(f.tenant.as_ref().map(ToString::to_string))
    .bind::<Nullable<Text>, _>(f.reminder.as_ref().map(ToString::to_string))
    .bind::<Nullable<Text>, _>(f.destination.as_ref().map(ToString::to_string))
    .bind::<Nullable<Text>, _>(f.reason.clone())
    .bind::<Nullable<BigInt>, _>(f.from.map(micros))
    .bind::<Nullable<BigInt>, _>(f.until.map(micros))
    .bind::<Text, _>(&new.requested_by)
    .bind::<BigInt, _>(new.horizon.num_seconds())
    .bind::<BigInt, _>(micros(now))
    .get_result::<JobRow>(conn)?
    .try_into()
}

impl SqliteStore {
    pub(super) async fn create_job(&self, new: NewJob) -> Result<Job, StoreError> {
        check_new_job(&new)?;
        self.run(true, move |conn, ctx| {
            let job = record_job(conn, &new, ctx.now)?;
            audit::record(conn, ctx, audit_entries::job_created(&job))?;
            Ok(job)
        })
        .await
    }

    pub(super) async fn job(&self, id: uuid::Uuid) -> Result<Option<Job>, StoreError> {
        self.run(false, move |conn, _| job(conn, id)).await
    }

    pub(super) async fn jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        self.run(false, move |conn, _| {
            let found: Vec<JobRow> = diesel::sql_query(
                "SELECT * FROM replay_jobs WHERE region = ? AND (? = 0 OR finished_at IS NULL) \
                 ORDER BY created_at DESC, id DESC LIMIT ?",
            )
            .bind::<Text, _>(region.as_str())
            .bind::<BigInt, _>(i64::from(unfinished_only))
            .bind::<BigInt, _>(i64::from(limit))
            .load(conn)?;
            found.into_iter().map(Job::try_from).collect()
        })
        .await
    }

    pub(super) async fn advance_job(&self, id: uuid::Uuid, batch: u32) -> Result<Job, StoreError> {
        let size = batch.max(1);
        let (job, wake, held) = self
            .run(true, move |conn, ctx| {
                let job = job(conn, id)?.ok_or_else(|| StoreError::NotFound {
                    what: "replay job",
                    id: id.to_string(),
                })?;
                if job.finished() {
                    return Ok((job, false, Vec::new()));
                }
                let tasks = next_batch(conn, &job, size)?;
                let picked = tasks.len();
                let last = tasks.last().map(|t| t.id.0.to_string());
                let mut done = 0_i64;
                // Whether work may be due sooner: a task replayed, or one
                // cancelled that held its ordering line back.
                let mut wake = false;
                // Tasks in flight, whose holder hands them back unsent.
                let mut held = Vec::new();
                for mut task in tasks {
                    let changed = match job.action {
                        JobAction::Replay => {
                            let deleted = rows::destination_deleted(conn, &task.destination_id)?;
                            let replayed =
                                lifecycle::replay(&mut task, job.horizon, deleted, ctx.now);
                            wake |= replayed;
                            replayed
                        }
                        JobAction::Cancel => {
                            match changes::cancel(&mut task, &job.requested_by, ctx.now) {
                                CancelStep::Now => {
                                    wake |= task.ordering_key.is_some();
                                    true
                                }
                                CancelStep::AfterAttempt => {
                                    held.push(task.id);
                                    true
                                }
                                CancelStep::Repeat | CancelStep::Ended => false,
                            }
                        }
                    };
                    if changed {
                        rows::write_task(conn, &task)?;
                        done += 1;
                    }
                }
                let finished = picked < size as usize;
                let job: Job = diesel::sql_query(
                    "UPDATE replay_jobs SET replayed = replayed + ?, \
                     cursor_task_id = coalesce(?, cursor_task_id), finished_at = ? WHERE id = ? \
                     RETURNING *",
                )
                .bind::<BigInt, _>(done)
                .bind::<Nullable<Text>, _>(last)
                .bind::<Nullable<BigInt>, _>(finished.then(|| micros(ctx.now)))
                .bind::<Text, _>(id.to_string())
                .get_result::<JobRow>(conn)?
                .try_into()?;
                Ok((job, wake, held))
            })
            .await?;
        if wake {
            self.wake(Wakeup::DueWork(job.region));
        }
        for task in held {
            self.wake(Wakeup::TaskChanged(task));
        }
        Ok(job)
    }
}

impl Jobs for SqliteStore {
    async fn create_job(&self, new: NewJob) -> Result<Job, StoreError> {
        SqliteStore::create_job(self, new).await
    }

    async fn job(&self, id: uuid::Uuid) -> Result<Option<Job>, StoreError> {
        SqliteStore::job(self, id).await
    }

    async fn jobs(
        &self,
        region: Region,
        unfinished_only: bool,
        limit: u32,
    ) -> Result<Vec<Job>, StoreError> {
        SqliteStore::jobs(self, region, unfinished_only, limit).await
    }

    async fn advance_job(&self, id: uuid::Uuid, batch: u32) -> Result<Job, StoreError> {
        SqliteStore::advance_job(self, id, batch).await
    }
}
