//! `Changes` on SQLite: each call one `BEGIN IMMEDIATE` transaction that
//! reads the rows it changes, applies `rules::changes` to them and writes
//! them back (with the payload's row, and the attempt a lease that ran out
//! lost), as the transitions of `finish` do. A change that makes work due
//! wakes this process's claimers of the region: a task moved or brought
//! forward, or one ended that held its ordering line back.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use super::attempt_rows;
use super::audit;
use super::payload_rows;
use super::rows::{self, micros, TaskRow, TASK_COLUMNS};
use super::store::Ctx;
use super::store::SqliteStore;
use crate::domain::{AuditAction, DestinationId, Region, Task, TaskId, TaskState, TenantId};
use crate::store::contract::{
    Cancel, Changes, Erase, ErasedTenant, Move, Reschedule, StoreError, Wakeup,
};
use crate::store::rules::changes::{self, CancelStep, MoveAsked, MoveStep};
use crate::store::rules::{audit_entries, requests};

impl SqliteStore {
    /// Empties the WAL after an erasure, when no other process reads from
    /// it (`connection::scrub_wal`); the erasure stands whatever this does.
    async fn scrub_wal(&self) {
        let _ = self
            .run(false, |conn, _| super::connection::scrub_wal(conn))
            .await;
    }
}

impl SqliteStore {
    /// Wakes the claimers of the task's region when it has just ended
    /// `cancelled` in an ordering line: the task behind it may go now.
    fn wake_line(&self, task: &Task) {
        if task.state == TaskState::Cancelled && task.ordering_key.is_some() {
            self.wake(Wakeup::DueWork(task.region));
        }
    }
}

/// Whether a change that left `task` as it is may have made work due: it
/// is waiting to be claimed, or it ended and let its ordering line go on.
fn makes_due(task: &Task) -> bool {
    match task.state {
        TaskState::Pending | TaskState::RetryWait => task.waiting_change.is_none(),
        TaskState::Cancelled => task.ordering_key.is_some(),
        _ => false,
    }
}

fn cancel(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    id: TaskId,
    by: &str,
) -> Result<Cancel, StoreError> {
    let Some(mut task) = rows::task(conn, id)? else {
        return Ok(Cancel::NotFound);
    };
    let before = task.clone();
    let done = match changes::cancel(&mut task, by, ctx.now) {
        CancelStep::Now => {
            rows::write_task(conn, &task)?;
            Cancel::Cancelled(task)
        }
        CancelStep::AfterAttempt => {
            rows::write_task(conn, &task)?;
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
        audit::record(conn, ctx, entry)?;
    }
    Ok(done)
}

fn reschedule(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    id: TaskId,
    change: &Reschedule,
) -> Result<Move, StoreError> {
    let to = requests::validate_reschedule(change)?;
    let Some(mut task) = rows::task(conn, id)? else {
        return Ok(Move::NotFound);
    };
    let before = task.clone();
    let deleted = match rows::any_destination_row(conn, &task.destination_id)? {
        Some(row) => row.deleted_at()?.is_some(),
        None => false,
    };
    let asked = MoveAsked {
        new_payload: change.payload.is_some(),
        revive: change.revive,
        destination_deleted: deleted,
    };
    let step = changes::reschedule(&mut task, to, asked, ctx.now);
    if let Some(refused) = changes::not_moved(step, &task) {
        return Ok(refused);
    }
    let after_attempt = step == MoveStep::AfterAttempt;
    if let Some(payload) = &change.payload {
        // Sealed as `schedule` seals it: bound to the same reference.
        let sealed = ctx
            .key
            .seal(task.payload_ref, &payload.content_type, &payload.body);
        payload_rows::replace_payload(
            conn,
            task.payload_ref,
            &payload.content_type,
            &sealed,
            ctx.now,
        )?;
    }
    rows::write_task(conn, &task)?;
    let entry = audit_entries::task_changed(AuditAction::TaskReschedule, &before, &task);
    audit::record(conn, ctx, entry)?;
    Ok(if after_attempt {
        Move::AfterAttempt(task)
    } else {
        Move::Moved(task)
    })
}

/// Erases the row's payload (its row deleted) and cancels the row if it
/// has not ended. Answers whether the payload was there until now, and
/// whether the erase cancels the row.
fn erase_row(
    conn: &mut SqliteConnection,
    task: &mut Task,
    by: &str,
    now: DateTime<Utc>,
) -> Result<(bool, bool), StoreError> {
    let cancels = changes::erase_cancels(task);
    let erased = changes::erase(task, by, now);
    payload_rows::delete_payload(conn, task.payload_ref)?;
    rows::write_task(conn, task)?;
    Ok((erased, cancels))
}

fn erase_tenant(
    conn: &mut SqliteConnection,
    tenant: &TenantId,
    by: &str,
    limit: u32,
    now: DateTime<Utc>,
) -> Result<(ErasedTenant, Vec<Region>), StoreError> {
    // Through `tasks_by_tenant`.
    let found: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND payload_erased_at IS NULL \
         ORDER BY id LIMIT ?"
    ))
    .bind::<Text, _>(tenant.as_str())
    .bind::<BigInt, _>(i64::from(limit))
    .load(conn)?;
    let mut done = ErasedTenant::default();
    let mut regions = Vec::new();
    for mut task in rows::tasks(found)? {
        let (erased, cancels) = erase_row(conn, &mut task, by, now)?;
        if erased {
            done.erased += 1;
            done.cancelled += u64::from(cancels);
        }
        if cancels && makes_due(&task) && !regions.contains(&task.region) {
            regions.push(task.region);
        }
    }
    Ok((done, regions))
}

/// Answers how many rows moved, and the regions they are in.
fn retry_now(
    conn: &mut SqliteConnection,
    destination: &DestinationId,
    tenant: Option<&TenantId>,
    now: DateTime<Utc>,
) -> Result<(u64, Vec<Region>), StoreError> {
    // Through `tasks_due`, whose WHERE the query repeats.
    let found: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {TASK_COLUMNS} FROM tasks \
         WHERE destination_id = ?1 AND state IN ('pending', 'retry_wait') \
           AND state = 'retry_wait' AND available_at > ?2 \
           AND (?3 IS NULL OR tenant_id = ?3) \
         ORDER BY available_at, seq"
    ))
    .bind::<Text, _>(destination.as_str())
    .bind::<BigInt, _>(micros(now))
    .bind::<Nullable<Text>, _>(tenant.map(TenantId::as_str))
    .load(conn)?;
    let mut moved = 0;
    let mut regions = Vec::new();
    for mut task in rows::tasks(found)? {
        if changes::retry_now(&mut task, now) {
            rows::write_task(conn, &task)?;
            moved += 1;
            if !regions.contains(&task.region) {
                regions.push(task.region);
            }
        }
    }
    Ok((moved, regions))
}

/// Answers how many changes it settled, and whether one may have made
/// work due (a move, or a cancel that let an ordering line go on).
fn settle_changes(
    conn: &mut SqliteConnection,
    region: Region,
    limit: u32,
    now: DateTime<Utc>,
) -> Result<(u64, bool), StoreError> {
    // Through `tasks_waiting_change`; a live lease is not settled yet.
    let found: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {TASK_COLUMNS} FROM tasks \
         WHERE region = ?1 AND waiting_change IS NOT NULL \
           AND (state <> 'leased' OR lease_expires_at <= ?2) \
         ORDER BY seq LIMIT ?3"
    ))
    .bind::<Text, _>(region.as_str())
    .bind::<BigInt, _>(micros(now))
    .bind::<BigInt, _>(i64::from(limit))
    .load(conn)?;
    let mut settled = 0;
    let mut due = false;
    for mut task in rows::tasks(found)? {
        if !changes::settles(&task, now) {
            continue;
        }
        let lost = changes::settle(&mut task, now);
        rows::write_task(conn, &task)?;
        if let Some(lost) = &lost {
            attempt_rows::insert_attempt(conn, lost)?;
        }
        settled += 1;
        due |= makes_due(&task);
    }
    Ok((settled, due))
}

impl Changes for SqliteStore {
    async fn cancel(&self, id: TaskId, by: &str) -> Result<Cancel, StoreError> {
        let by = by.to_owned();
        let cancelled = self
            .run(true, move |conn, ctx| cancel(conn, ctx, id, &by))
            .await?;
        match &cancelled {
            Cancel::Cancelled(task) => self.wake_line(task),
            Cancel::AfterAttempt(task) => self.wake(Wakeup::TaskChanged(task.id)),
            _ => {}
        }
        Ok(cancelled)
    }

    async fn reschedule(&self, id: TaskId, change: &Reschedule) -> Result<Move, StoreError> {
        let change = change.clone();
        let moved = self
            .run(true, move |conn, ctx| reschedule(conn, ctx, id, &change))
            .await?;
        match &moved {
            Move::Moved(task) => self.wake(Wakeup::DueWork(task.region)),
            Move::AfterAttempt(task) => self.wake(Wakeup::TaskChanged(task.id)),
            _ => {}
        }
        Ok(moved)
    }

    async fn erase(&self, id: TaskId, by: &str) -> Result<Erase, StoreError> {
        let by = by.to_owned();
        let erased = self
            .run(true, move |conn, ctx| {
                let Some(mut task) = rows::task(conn, id)? else {
                    return Ok(Erase::NotFound);
                };
                let before = task.clone();
                erase_row(conn, &mut task, &by, ctx.now)?;
                let entry = audit_entries::task_changed(AuditAction::TaskErase, &before, &task);
                audit::record(conn, ctx, entry)?;
                Ok(Erase::Erased(task))
            })
            .await?;
        if let Erase::Erased(task) = &erased {
            self.wake_line(task);
            if task.waiting_change.is_some() {
                self.wake(Wakeup::TaskChanged(task.id));
            }
            self.scrub_wal().await;
        }
        Ok(erased)
    }

    async fn erase_tenant(
        &self,
        tenant: &TenantId,
        by: &str,
        limit: u32,
    ) -> Result<ErasedTenant, StoreError> {
        let tenant = tenant.clone();
        let by = by.to_owned();
        let (done, regions) = self
            .run(true, move |conn, ctx| {
                let round = erase_tenant(conn, &tenant, &by, limit, ctx.now)?;
                audit::record(conn, ctx, audit_entries::tenant_erased(&tenant, round.0))?;
                Ok(round)
            })
            .await?;
        for region in regions {
            self.wake(Wakeup::DueWork(region));
        }
        if done.erased > 0 {
            self.scrub_wal().await;
        }
        Ok(done)
    }

    async fn retry_now(
        &self,
        destination: &DestinationId,
        tenant: Option<&TenantId>,
    ) -> Result<u64, StoreError> {
        let destination = destination.clone();
        let tenant = tenant.cloned();
        let (moved, regions) = self
            .run(true, move |conn, ctx| {
                // Nothing moves for a destination that does not exist, and
                // nothing is recorded.
                let Some(target) = rows::destination_row(conn, &destination)? else {
                    return Ok((0, Vec::new()));
                };
                let region = target.destination()?.region;
                let done = retry_now(conn, &destination, tenant.as_ref(), ctx.now)?;
                let entry =
                    audit_entries::retried_now(&destination, region, tenant.as_ref(), done.0);
                audit::record(conn, ctx, entry)?;
                Ok(done)
            })
            .await?;
        for region in regions {
            self.wake(Wakeup::DueWork(region));
        }
        Ok(moved)
    }

    async fn settle_changes(&self, region: Region, limit: u32) -> Result<u64, StoreError> {
        let (settled, due) = self
            .run(true, move |conn, ctx| {
                settle_changes(conn, region, limit, ctx.now)
            })
            .await?;
        if due {
            self.wake(Wakeup::DueWork(region));
        }
        Ok(settled)
    }
}
