//! Scheduling a logical webhook: one payload row and one task row,
//! committed together, idempotent on (tenant_id, reminder_id).

use chrono::SubsecRound;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::enums::StateColumn;
use super::notify::DUE_WORK_CHANNEL;
use super::rows::TaskRow;
use super::schema::{destinations, payloads, tasks};
use super::{reads, PgStore, Scheduled, StoreError};
use crate::domain::{InvalidInput, NewTask, Payload, Task, TaskId, TaskState, MAX_PAYLOAD_BYTES};

pub(super) async fn schedule(store: &PgStore, new: NewTask) -> Result<Scheduled, StoreError> {
    validate(&new)?;
    // PostgreSQL keeps microseconds; compare repeats at that precision.
    let new = NewTask {
        not_before: new.not_before.trunc_subsecs(6),
        ..new
    };
    let mut conn = store.conn().await?;
    check_destination(&mut conn, &new).await?;

    if let Some(existing) = find(&mut conn, &new).await? {
        return same_or_conflict(store, &mut conn, existing, &new).await;
    }

    let id = TaskId::random();
    let payload_ref = uuid::Uuid::new_v4();
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
                        tasks::idempotency_key.eq(idempotency_key(id)),
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

/// The idempotency key every attempt carries, fixed for the task's life.
fn idempotency_key(id: TaskId) -> String {
    format!("msg_{}", id.0.simple())
}

fn validate(new: &NewTask) -> Result<(), InvalidInput> {
    if new.payload.content_type.trim().is_empty() {
        return Err(InvalidInput::new("content_type", "must not be empty"));
    }
    if new.payload.body.len() > MAX_PAYLOAD_BYTES {
        return Err(InvalidInput::new(
            "payload",
            format!("must be at most {MAX_PAYLOAD_BYTES} bytes"),
        ));
    }
    if new.retry_horizon < chrono::Duration::zero() {
        return Err(InvalidInput::new("retry_horizon", "must not be negative"));
    }
    if new
        .not_before
        .checked_add_signed(new.retry_horizon)
        .is_none()
    {
        return Err(InvalidInput::new("not_before", "is too far in the future"));
    }
    Ok(())
}

/// The destination must exist and live in the task's region.
async fn check_destination(conn: &mut AsyncPgConnection, new: &NewTask) -> Result<(), StoreError> {
    let region: Option<String> = destinations::table
        .find(new.destination_id.as_str())
        .select(destinations::region)
        .first(conn)
        .await
        .optional()?;
    match region {
        None => Err(InvalidInput::new(
            "destination_id",
            format!(
                "no destination {:?} is registered",
                new.destination_id.as_str()
            ),
        )
        .into()),
        Some(r) if r != new.region.as_str() => Err(InvalidInput::new(
            "region",
            format!(
                "destination {:?} is in region {r:?}, not {:?}",
                new.destination_id.as_str(),
                new.region.as_str()
            ),
        )
        .into()),
        Some(_) => Ok(()),
    }
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

/// A repeat of the same request returns the task; anything else that
/// reuses its ids is a conflict. The stored payload is decrypted to compare.
async fn same_or_conflict(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    existing: Task,
    new: &NewTask,
) -> Result<Scheduled, StoreError> {
    let mut differs = Vec::new();
    if existing.destination_id != new.destination_id {
        differs.push("destination_id");
    }
    if existing.region != new.region {
        differs.push("region");
    }
    if existing.not_before != new.not_before {
        differs.push("not_before");
    }
    let stored: Payload = reads::open_payload(store, conn, existing.payload_ref).await?;
    if stored != new.payload {
        differs.push("payload");
    }
    if differs.is_empty() {
        Ok(Scheduled {
            task: existing,
            created: false,
        })
    } else {
        Err(StoreError::Conflict {
            what: format!(
                "task for tenant {:?} reminder {:?}",
                new.tenant_id.as_str(),
                new.reminder_id.as_str()
            ),
            differs: differs.join(", "),
        })
    }
}
