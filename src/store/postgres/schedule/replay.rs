//! The one way out of `failed`: an operator's replay, back to `pending`
//! with a fresh retry horizon and attempt budget.
//!
//! `attempt_count` is kept, so the next attempt is logged with the next
//! number and the log never holds two attempts with one number; the fresh
//! budget comes from `attempts_before_replay`, which the retry policy
//! subtracts (see `Task::attempts_since_replay`).

use chrono::Duration;
use diesel::sql_types::{BigInt, Nullable, Timestamptz, Uuid};
use diesel::OptionalExtension;
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::super::audit;
use super::super::tables::rows::TaskRow;
use crate::domain::{AuditAction, Task, TaskId};
use crate::store::contract::{Replayed, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries;

const REPLAY_SQL: &str = concat!(
    r#"
WITH clock AS (SELECT coalesce($2, now()) AS now)
UPDATE tasks t
"#,
    replay_set!("$3"),
    r#"
FROM clock
WHERE t.id = $1 AND t.state = 'failed' AND t.payload_erased_at IS NULL
  -- Never to a deleted destination.
  AND NOT EXISTS (SELECT 1 FROM destinations d
                  WHERE d.id = t.destination_id AND d.deleted_at IS NOT NULL)
RETURNING t.*
"#
);

pub(in crate::store::postgres) async fn replay(
    store: &PgStore,
    id: TaskId,
    horizon: Duration,
) -> Result<Replayed, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let Some(before) = super::super::changes::locked(conn, id).await? else {
            return Ok(Replayed::NotFound);
        };
        let row: Option<TaskRow> = diesel::sql_query(REPLAY_SQL)
            .bind::<Uuid, _>(id.0)
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .bind::<BigInt, _>(horizon.num_milliseconds().max(0))
            .get_result(conn)
            .await
            .optional()?;
        let Some(row) = row else {
            return Ok(Replayed::NotFailed(before));
        };
        let after: Task = row.try_into()?;
        let entry = audit_entries::task_changed(AuditAction::TaskReplay, &before, &after);
        audit::record(store, conn, entry).await?;
        Ok(Replayed::Replayed(after))
    })
    .await
}
