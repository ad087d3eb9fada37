//! An operator's changes to tasks on PostgreSQL. None is on the delivery
//! path, so each reads its row under a lock, applies the rule of
//! `rules::changes` (the one the model and SQLite apply), and writes back
//! the columns a change may touch, in one transaction. The lock orders the
//! change with a claim (which skips a locked row, and checks the state
//! again on a row changed since its snapshot) and with a finish (which
//! waits for it, and leaves a waiting change for the settle).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Integer, Nullable, Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::audit;
use super::connection::notify::{DUE_WORK_CHANNEL, TASK_CHANGED_CHANNEL};
use super::store_now::now;
use super::tables::enums::StateColumn;
use super::tables::rows::TaskRow;
use super::tables::schema::{attempts, destinations, payloads, tasks};
use crate::domain::{
    Attempt, AuditAction, DestinationId, Region, Task, TaskId, TaskState, TenantId,
};
use crate::store::contract::{Cancel, Changes, Erase, ErasedTenant, Move, Reschedule, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::changes::{self, CancelStep, MoveAsked, MoveStep};
use crate::store::rules::{audit_entries, columns};

/// The row, locked until the transaction ends; `None` when there is none.
pub(super) async fn locked(
    conn: &mut AsyncPgConnection,
    id: TaskId,
) -> Result<Option<Task>, StoreError> {
    let row: Option<TaskRow> = tasks::table
        .find(id.0)
        .select(TaskRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    row.map(Task::try_from).transpose()
}

/// Writes back every column a change may touch.
pub(super) async fn write(conn: &mut AsyncPgConnection, task: &Task) -> Result<(), StoreError> {
    diesel::update(tasks::table.find(task.id.0))
        .set((
            tasks::state.eq(StateColumn(task.state)),
            tasks::not_before.eq(task.not_before),
            tasks::available_at.eq(task.available_at),
            tasks::retry_horizon_at.eq(task.retry_horizon_at),
            tasks::attempts_before_replay.eq(task.attempts_before_replay),
            tasks::failure_reason.eq(&task.failure_reason),
            tasks::finalized_at.eq(task.finalized_at),
            tasks::lease_token.eq(task.lease_token),
            tasks::lease_owner.eq(&task.lease_owner),
            tasks::lease_expires_at.eq(task.lease_expires_at),
            tasks::cancelled_at.eq(task.cancelled.as_ref().map(|c| c.at)),
            tasks::cancelled_by.eq(task.cancelled.as_ref().map(|c| c.by.as_str())),
            tasks::waiting_change.eq(task.waiting_change.map(|c| c.label())),
            tasks::move_to.eq(task.waiting_change.and_then(|c| c.move_to())),
            tasks::payload_erased_at.eq(task.payload_erased_at),
            tasks::updated_at.eq(task.updated_at),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// Tells every process that a change now waits for the task's attempt, at
/// commit: one holding it unsent hands it back.
pub(super) async fn tell_holder(
    conn: &mut AsyncPgConnection,
    task: &Task,
) -> Result<(), StoreError> {
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(TASK_CHANGED_CHANNEL)
        .bind::<Text, _>(task.id.to_string())
        .execute(conn)
        .await?;
    Ok(())
}

/// Tells the region's claimers that work may be due sooner, at commit.
async fn wake(conn: &mut AsyncPgConnection, task: &Task) -> Result<(), StoreError> {
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(DUE_WORK_CHANNEL)
        .bind::<Text, _>(task.region.as_str())
        .execute(conn)
        .await?;
    Ok(())
}

/// Whether the destination was deleted, its row held against a deletion
/// until the transaction ends (so a task is never moved into a deletion
/// whose cancel has already passed it). A key-share lock: a deletion's
/// FOR UPDATE waits for it, while token takes and finishes, which update
/// the row's other columns, do not (so no finish holding the destination
/// can wait on this task's lock in a circle).
async fn destination_deleted(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
) -> Result<bool, StoreError> {
    let deleted: Option<Option<DateTime<Utc>>> = destinations::table
        .find(id.as_str())
        .select(destinations::deleted_at)
        .for_key_share()
        .first(conn)
        .await
        .optional()?;
    Ok(deleted.is_some_and(|at| at.is_some()))
}

async fn drop_payload(conn: &mut AsyncPgConnection, task: &Task) -> Result<(), StoreError> {
    diesel::delete(payloads::table.find(task.payload_ref))
        .execute(conn)
        .await?;
    Ok(())
}

pub(super) async fn cancel(store: &PgStore, id: TaskId, by: &str) -> Result<Cancel, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = now(store, conn).await?;
        let Some(mut task) = locked(conn, id).await? else {
            return Ok(Cancel::NotFound);
        };
        let before = task.clone();
        let done = match changes::cancel(&mut task, by, now) {
            CancelStep::Now => {
                write(conn, &task).await?;
                if task.ordering_key.is_some() {
                    // The task behind it in its line may go now.
                    wake(conn, &task).await?;
                }
                Cancel::Cancelled(task)
            }
            CancelStep::AfterAttempt => {
                write(conn, &task).await?;
                tell_holder(conn, &task).await?;
                Cancel::AfterAttempt(task)
            }
            CancelStep::Repeat => Cancel::AlreadyCancelled(task),
            CancelStep::Ended => return Ok(Cancel::Ended(task)),
        };
        if let Cancel::Cancelled(after)
        | Cancel::AfterAttempt(after)
        | Cancel::AlreadyCancelled(after) = &done
        {
            let entry = audit_entries::task_changed(AuditAction::TaskCancel, &before, after);
            audit::record(store, conn, entry).await?;
        }
        Ok(done)
    })
    .await
}

pub(super) async fn reschedule(
    store: &PgStore,
    id: TaskId,
    change: &Reschedule,
) -> Result<Move, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = now(store, conn).await?;
        let Some(mut task) = locked(conn, id).await? else {
            return Ok(Move::NotFound);
        };
        let before = task.clone();
        let asked = MoveAsked {
            new_payload: change.payload.is_some(),
            revive: change.revive,
            destination_deleted: destination_deleted(conn, &task.destination_id).await?,
        };
        let step = changes::reschedule(&mut task, change.not_before, asked, now);
        if let Some(refused) = changes::not_moved(step, &task) {
            return Ok(refused);
        }
        if let Some(payload) = &change.payload {
            let sealed = store
                .key
                .seal(task.payload_ref, &payload.content_type, &payload.body);
            diesel::insert_into(payloads::table)
                .values((
                    payloads::payload_ref.eq(task.payload_ref),
                    payloads::content_type.eq(&payload.content_type),
                    payloads::key_fingerprint.eq(&sealed.key_fingerprint),
                    payloads::nonce.eq(&sealed.nonce),
                    payloads::ciphertext.eq(&sealed.ciphertext),
                    payloads::created_at.eq(now),
                ))
                .on_conflict(payloads::payload_ref)
                .do_update()
                .set((
                    payloads::content_type.eq(&payload.content_type),
                    payloads::key_fingerprint.eq(&sealed.key_fingerprint),
                    payloads::nonce.eq(&sealed.nonce),
                    payloads::ciphertext.eq(&sealed.ciphertext),
                ))
                .execute(conn)
                .await?;
        }
        write(conn, &task).await?;
        let entry = audit_entries::task_changed(AuditAction::TaskReschedule, &before, &task);
        audit::record(store, conn, entry).await?;
        Ok(match step {
            MoveStep::AfterAttempt => {
                tell_holder(conn, &task).await?;
                Move::AfterAttempt(task)
            }
            _ => {
                wake(conn, &task).await?;
                Move::Moved(task)
            }
        })
    })
    .await
}

pub(super) async fn erase(store: &PgStore, id: TaskId, by: &str) -> Result<Erase, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = now(store, conn).await?;
        let Some(mut task) = locked(conn, id).await? else {
            return Ok(Erase::NotFound);
        };
        let before = task.clone();
        if changes::erase(&mut task, by, now) {
            drop_payload(conn, &task).await?;
        }
        write(conn, &task).await?;
        if task.waiting_change.is_some() {
            tell_holder(conn, &task).await?;
        }
        let entry = audit_entries::task_changed(AuditAction::TaskErase, &before, &task);
        audit::record(store, conn, entry).await?;
        Ok(Erase::Erased(task))
    })
    .await
}

pub(super) async fn erase_tenant(
    store: &PgStore,
    tenant: &TenantId,
    by: &str,
    limit: u32,
) -> Result<ErasedTenant, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = now(store, conn).await?;
        // The tenant's rows by (tenant_id, reminder_id), the unique index.
        // Not SKIP LOCKED: a round that came back short because it passed
        // a row a claim held would end the erasure with that row left.
        let rows: Vec<TaskRow> = tasks::table
            .filter(tasks::tenant_id.eq(tenant.as_str()))
            .filter(tasks::payload_erased_at.is_null())
            .select(TaskRow::as_select())
            .limit(i64::from(limit.max(1)))
            .for_update()
            .load(conn)
            .await?;
        let mut done = ErasedTenant::default();
        for row in rows {
            let mut task = Task::try_from(row)?;
            if changes::erase_cancels(&task) {
                done.cancelled += 1;
            }
            changes::erase(&mut task, by, now);
            drop_payload(conn, &task).await?;
            write(conn, &task).await?;
            if task.waiting_change.is_some() {
                tell_holder(conn, &task).await?;
            }
            done.erased += 1;
        }
        audit::record(store, conn, audit_entries::tenant_erased(tenant, done)).await?;
        Ok(done)
    })
    .await
}

/// Due now, by the rule of `changes::retry_now`, in one statement: the
/// destination's rows waiting for a retry and due later, found through
/// `task_queue_due` (region, destination, `available_at`).
const RETRY_NOW_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now),
target AS (SELECT d.id, d.region FROM destinations d WHERE d.id = $2),
moved AS (
    UPDATE tasks t
    SET available_at = GREATEST(clock.now, t.not_before), updated_at = clock.now
    FROM task_queue q, clock, target
    WHERE q.region = target.region AND q.destination_id COLLATE "C" = target.id COLLATE "C"
      AND q.available_at > clock.now AND q.retrying
      AND ($3::text IS NULL OR q.tenant_id = $3)
      AND t.id = q.task_id AND t.state = 'retry_wait' AND t.available_at > clock.now
    RETURNING t.region
)
SELECT count(*)::int AS moved,
       (SELECT count(pg_notify($4, r.region)) FROM (SELECT DISTINCT region FROM moved) r)::int
           AS woken
FROM moved
"#;

#[derive(QueryableByName)]
struct Moved {
    #[diesel(sql_type = Integer)]
    moved: i32,
    #[diesel(sql_type = Integer)]
    #[allow(dead_code)] // read only for its side effect, the wake-ups
    woken: i32,
}

pub(super) async fn retry_now(
    store: &PgStore,
    destination: &DestinationId,
    tenant: Option<&TenantId>,
) -> Result<u64, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        // Nothing moves for a destination that does not exist, and nothing
        // is recorded.
        let region: Option<String> = destinations::table
            .find(destination.as_str())
            .filter(destinations::deleted_at.is_null())
            .select(destinations::region)
            .first(conn)
            .await
            .optional()?;
        let Some(region) = region else {
            return Ok(0);
        };
        let region = columns::region("destinations.region", &region)?;
        let moved: Moved = diesel::sql_query(RETRY_NOW_SQL)
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .bind::<Text, _>(destination.as_str())
            .bind::<Nullable<Text>, _>(tenant.map(|t| t.as_str()))
            .bind::<Text, _>(DUE_WORK_CHANNEL)
            .get_result(conn)
            .await?;
        let moved = u64::try_from(moved.moved).unwrap_or(0);
        let entry = audit_entries::retried_now(destination, region, tenant, moved);
        audit::record(store, conn, entry).await?;
        Ok(moved)
    })
    .await
}

pub(super) async fn settle_changes(
    store: &PgStore,
    region: crate::domain::Region,
    limit: u32,
) -> Result<u64, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now: DateTime<Utc> = now(store, conn).await?;
        // Through `tasks_waiting_change`: few rows, whichever their state.
        let rows: Vec<TaskRow> = tasks::table
            .filter(tasks::region.eq(region.as_str()))
            .filter(tasks::waiting_change.is_not_null())
            .filter(
                tasks::state
                    .ne(StateColumn(TaskState::Leased))
                    .or(tasks::lease_expires_at.le(now)),
            )
            .select(TaskRow::as_select())
            .limit(i64::from(limit.max(1)))
            .for_update()
            .skip_locked()
            .load(conn)
            .await?;
        let mut settled = 0;
        for row in rows {
            let mut task = Task::try_from(row)?;
            if !changes::settles(&task, now) {
                continue;
            }
            if let Some(lost) = changes::settle(&mut task, now) {
                log_attempt(conn, &lost).await?;
            }
            write(conn, &task).await?;
            // Due again, or ended in a line the next task of which may go.
            if !task.state.is_terminal() || task.ordering_key.is_some() {
                wake(conn, &task).await?;
            }
            settled += 1;
        }
        Ok(settled)
    })
    .await
}

/// Appends an attempt row the rule wrote (a lost lease's).
async fn log_attempt(conn: &mut AsyncPgConnection, attempt: &Attempt) -> Result<(), StoreError> {
    diesel::insert_into(attempts::table)
        .values((
            attempts::task_id.eq(attempt.task_id.0),
            attempts::attempt_number.eq(attempt.attempt_number),
            attempts::lease_token.eq(attempt.lease_token),
            attempts::consumer_id.eq(&attempt.lease_owner),
            attempts::outcome.eq(super::tables::enums::OutcomeColumn(attempt.outcome)),
            attempts::recorded_at.eq(attempt.recorded_at),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

impl Changes for PgStore {
    async fn cancel(&self, id: TaskId, by: &str) -> Result<Cancel, StoreError> {
        self::cancel(self, id, by).await
    }

    async fn reschedule(&self, id: TaskId, change: &Reschedule) -> Result<Move, StoreError> {
        self::reschedule(self, id, change).await
    }

    async fn erase(&self, id: TaskId, by: &str) -> Result<Erase, StoreError> {
        self::erase(self, id, by).await
    }

    async fn erase_tenant(
        &self,
        tenant: &TenantId,
        by: &str,
        limit: u32,
    ) -> Result<ErasedTenant, StoreError> {
        self::erase_tenant(self, tenant, by, limit).await
    }

    async fn retry_now(
        &self,
        destination: &DestinationId,
        tenant: Option<&TenantId>,
    ) -> Result<u64, StoreError> {
        self::retry_now(self, destination, tenant).await
    }

    async fn settle_changes(&self, region: Region, limit: u32) -> Result<u64, StoreError> {
        self::settle_changes(self, region, limit).await
    }
}
