//! Scheduling a logical webhook: one payload row and one task row,
//! committed together, idempotent on (tenant_id, reminder_id).

use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::enums::StateColumn;
use super::notify::DUE_WORK_CHANNEL;
use super::rows::TaskRow;
use super::schema::{destinations, payloads, tasks};
use super::{reads, rules, PgStore, Scheduled, StoreError};
use crate::domain::{idempotency_key, NewTask, Task, TaskId, TaskState};

pub(super) async fn schedule(store: &PgStore, new: NewTask) -> Result<Scheduled, StoreError> {
    let new = rules::validate(new)?;
    let mut conn = store.conn().await?;
    check_destination(&mut conn, &new).await?;

    if let Some(existing) = find(&mut conn, &new).await? {
        return same_or_conflict(store, &mut conn, existing, &new).await;
    }

    let id = TaskId::generate();
    let payload_ref = uuid::Uuid::now_v7();
    let sealed = store
        .key
        .seal(payload_ref, &new.payload.content_type, &new.payload.body);
    let inserted: Option<TaskRow> = conn
        .transaction::<_, diesel::result::Error, _>(async |conn| {
            {
                diesel::insert_into(payloads::table)
                    .values((
                        payloads::payload_ref.eq(payload_ref),
                        payloads::content_type.eq(&new.payload.content_type),
                        payloads::key_fingerprint.eq(&sealed.key_fingerprint),
                        payloads::nonce.eq(&sealed.nonce),
                        payloads::ciphertext.eq(&sealed.ciphertext),
                    ))
                    .execute(conn)
                    .await?;
                let row = diesel::insert_into(tasks::table)
                    .values((
                        tasks::id.eq(id.0),
                        tasks::tenant_id.eq(new.tenant_id.as_str()),
                        tasks::reminder_id.eq(new.reminder_id.as_str()),
                        tasks::destination_id.eq(new.destination_id.as_str()),
                        tasks::region.eq(new.region.as_str()),
                        tasks::state.eq(StateColumn(TaskState::Pending)),
                        tasks::not_before.eq(new.not_before),
                        tasks::available_at.eq(new.not_before),
                        tasks::retry_horizon_at.eq(new.not_before + new.retry_horizon),
                        tasks::idempotency_key
                            .eq(idempotency_key(&new.tenant_id, &new.reminder_id)),
                        tasks::payload_ref.eq(payload_ref),
                    ))
                    .on_conflict((tasks::tenant_id, tasks::reminder_id))
                    .do_nothing()
                    .returning(TaskRow::as_returning())
                    .get_result(conn)
                    .await
                    .optional()?;
                if row.is_none() {
                    // A concurrent request won the race: drop our payload.
                    return Err(diesel::result::Error::RollbackTransaction);
                }
                // Delivered with the commit: wake the region's claimers.
                diesel::sql_query("SELECT pg_notify($1, $2)")
                    .bind::<Text, _>(DUE_WORK_CHANNEL)
                    .bind::<Text, _>(new.region.as_str())
                    .execute(conn)
                    .await?;
                Ok(row)
            }
        })
        .await
        .or_else(|e| match e {
            diesel::result::Error::RollbackTransaction => Ok(None),
            e => Err(e),
        })?;

    match inserted {
        Some(row) => Ok(Scheduled {
            task: row.try_into()?,
            created: true,
        }),
        None => {
            let existing = find(&mut conn, &new)
                .await?
                .ok_or_else(|| StoreError::NotFound {
                    what: "task",
                    id: format!("{}/{}", new.tenant_id, new.reminder_id),
                })?;
            same_or_conflict(store, &mut conn, existing, &new).await
        }
    }
}

/// The destination must exist and live in the task's region.
async fn check_destination(conn: &mut AsyncPgConnection, new: &NewTask) -> Result<(), StoreError> {
    let region: Option<String> = destinations::table
        .find(new.destination_id.as_str())
        .select(destinations::region)
        .first(conn)
        .await
        .optional()?;
    let region = region
        .map(|r| super::rows::region("destinations.region", &r))
        .transpose()?;
    Ok(rules::check_destination(region, new)?)
}

async fn find(conn: &mut AsyncPgConnection, new: &NewTask) -> Result<Option<Task>, StoreError> {
    tasks::table
        .filter(tasks::tenant_id.eq(new.tenant_id.as_str()))
        .filter(tasks::reminder_id.eq(new.reminder_id.as_str()))
        .select(TaskRow::as_select())
        .first(conn)
        .await
        .optional()?
        .map(Task::try_from)
        .transpose()
}

/// Compares a repeat with the stored task, decrypting its payload.
async fn same_or_conflict(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    existing: Task,
    new: &NewTask,
) -> Result<Scheduled, StoreError> {
    let stored = reads::open_payload(store, conn, existing.payload_ref).await?;
    rules::same_or_conflict(existing, &stored, new)
}
