//! Reading tasks, their attempt logs and their payloads.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::tables::rows::{AttemptRow, PayloadRow, TaskRow};
use super::super::tables::schema::{attempts, payloads, tasks};
use crate::domain::{Attempt, Payload, Task, TaskId};
use crate::payload_crypto::PayloadCryptoError;
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

pub(in crate::store::postgres) async fn task(
    store: &PgStore,
    id: TaskId,
) -> Result<Option<Task>, StoreError> {
    let mut conn = store.conn().await?;
    tasks::table
        .find(id.0)
        .select(TaskRow::as_select())
        .first(&mut conn)
        .await
        .optional()?
        .map(Task::try_from)
        .transpose()
}

pub(in crate::store::postgres) async fn ping(store: &PgStore) -> Result<(), StoreError> {
    let mut conn = store.conn().await?;
    diesel::sql_query("SELECT 1").execute(&mut conn).await?;
    Ok(())
}

pub(in crate::store::postgres) async fn attempts(
    store: &PgStore,
    id: TaskId,
) -> Result<Vec<Attempt>, StoreError> {
    let mut conn = store.conn().await?;
    attempts::table
        .filter(attempts::task_id.eq(id.0))
        .order(attempts::id)
        .select(AttemptRow::as_select())
        .load(&mut conn)
        .await?
        .into_iter()
        .map(Attempt::try_from)
        .collect()
}

pub(in crate::store::postgres) async fn payload(
    store: &PgStore,
    task: &Task,
) -> Result<Payload, StoreError> {
    if let Some(at) = task.payload_erased_at {
        return Err(StoreError::payload_erased(task.payload_ref, at));
    }
    let mut conn = store.conn().await?;
    match open_payload(store, &mut conn, task.payload_ref).await {
        Err(StoreError::Payload(e @ PayloadCryptoError::WrongKey { .. })) => {
            let recorded = super::super::keys::payload_keys::recorded(&mut conn).await?;
            Err(StoreError::Payload(
                store.key.knowing_recorded(e, &recorded),
            ))
        }
        read => read,
    }
}

/// Loads and decrypts one payload. A wrong key is reported as such.
pub(in crate::store::postgres) async fn open_payload(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    payload_ref: uuid::Uuid,
) -> Result<Payload, StoreError> {
    let row: PayloadRow = payloads::table
        .find(payload_ref)
        .select(PayloadRow::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| StoreError::NotFound {
            what: "payload",
            id: payload_ref.to_string(),
        })?;
    let content_type = row.content_type.clone();
    let body = store.key.open(payload_ref, &content_type, &row.into())?;
    Ok(Payload { content_type, body })
}
