//! An operator's change of a destination, and its deletion, on
//! PostgreSQL: each reads the row under a lock, applies the rule every
//! store applies (`rules::destination_change`), writes it back and tells
//! every process of the region at commit, in one transaction.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::super::connection::notify::{DESTINATION_CHANNEL, DUE_WORK_CHANNEL};
use super::super::tables::rows::settings_columns;
use super::super::tables::schema::{destination_secrets, destinations};
use super::super::{audit, jobs};
use super::headers;
use crate::domain::{AuditAction, Destination, DestinationChange, DestinationId, Region};
use crate::store::contract::{Deleted, NewJob, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries::destination_changed;
use crate::store::rules::destination_change::{live_refusal, plan, tombstone, DELETED_REASON};

pub(in crate::store::postgres) async fn update(
    store: &PgStore,
    id: &DestinationId,
    change: DestinationChange,
) -> Result<Destination, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let current = locked(conn, id, false).await?;
        let stored = headers::records(conn, &[id.as_str()])
            .await?
            .remove(id.as_str())
            .unwrap_or_default();
        let plan = plan(&current, &stored, &change, &store.key)?;
        let s = &plan.settings;
        let count = |v: Option<u32>| v.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
        diesel::update(destinations::table.find(id.as_str()))
            .set((
                destinations::url.eq(plan.url.as_str()),
                settings_columns(s),
                destinations::disable_after_seconds.eq(plan.overrides.after_seconds),
                destinations::disable_after_failures.eq(count(plan.overrides.failures)),
                destinations::updated_at.eq(diesel::dsl::now),
            ))
            .execute(conn)
            .await?;
        if let Some(records) = &plan.headers {
            headers::replace(conn, id.as_str(), records).await?;
        }
        if limits_changed(&current.settings, s) {
            diesel::sql_query(TURN_AGAIN_SQL)
                .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
                .bind::<Text, _>(id.as_str())
                .bind::<Text, _>(current.region.as_str())
                .bind::<BigInt, _>(TURN_AGAIN_MOST)
                .execute(conn)
                .await?;
        }
        // Limits may have loosened: the claimers look again too.
        tell(conn, id, Some(current.region)).await?;
        let after = super::destination_rows::destination_on(conn, id)
            .await?
            .ok_or_else(|| StoreError::no_destination(id))?;
        let entry = destination_changed(AuditAction::DestinationUpdate, Some(&current), &after);
        audit::record(store, conn, entry).await?;
        Ok(after)
    })
    .await
}

/// $1 the store's now, $2 the destination, $3 its region. Its tasks that
/// went back to wait for their turn under the old limits (never tried, due
/// later than their `not_before`) are due now, so new limits are felt at
/// once, not when the old turns come; the throttle paces them. Not while
/// its receiver's pause holds them anyway, and at most the
/// [`TURN_AGAIN_MOST`] nearest: a longer backlog goes at its old turns.
const TURN_AGAIN_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now),
waiting AS (
    SELECT q.task_id
    FROM task_queue q, clock
    WHERE q.region = $3 AND q.destination_id COLLATE "C" = $2 COLLATE "C"
      AND q.available_at > clock.now AND NOT q.retrying
      AND NOT EXISTS (SELECT 1 FROM destinations d
                      WHERE d.id = $2 AND d.paused_until > clock.now)
    ORDER BY q.available_at
    LIMIT $4
)
UPDATE tasks t
SET available_at = GREATEST(clock.now, t.not_before), updated_at = clock.now
FROM waiting w, clock
WHERE t.id = w.task_id AND t.state = 'pending' AND t.waiting_change IS NULL
  AND t.available_at > GREATEST(clock.now, t.not_before)
"#;

/// The most waiting turns a change of limits brings forward.
const TURN_AGAIN_MOST: i64 = 10_000;

/// Whether a change moved the limits a throttle paces by.
pub(in crate::store) fn limits_changed(
    was: &crate::domain::DestinationSettings,
    now: &crate::domain::DestinationSettings,
) -> bool {
    was.rate_per_second != now.rate_per_second
        || was.burst != now.burst
        || was.max_in_flight != now.max_in_flight
}

/// $1 the destination, $2 the region: its live rows, read from the live
/// index (pending, waiting and leased rows only).
const LIVE_SQL: &str = r#"
SELECT count(*) AS live FROM task_queue WHERE region = $2 AND destination_id = $1
"#;

#[derive(QueryableByName)]
struct Live {
    #[diesel(sql_type = BigInt)]
    live: i64,
}

/// $1 the destination, $2 the store's now (NULL: the database's).
const TOMBSTONE_SQL: &str = r#"
UPDATE destinations
SET deleted_at = coalesce($2, now()), enabled = false, disabled_reason = $3,
    disabled_at = coalesce($2, now()), updated_at = now()
WHERE id = $1
"#;

pub(in crate::store::postgres) async fn delete(
    store: &PgStore,
    id: &DestinationId,
    cancel: Option<NewJob>,
) -> Result<Deleted, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        // A schedule checks the row under a share lock: it waits for this
        // one and then sees the tombstone.
        let destination = locked(conn, id, true).await?;
        let live: Live = diesel::sql_query(LIVE_SQL)
            .bind::<Text, _>(id.as_str())
            .bind::<Text, _>(destination.region.as_str())
            .get_result(conn)
            .await?;
        let live_tasks = u64::try_from(live.live).unwrap_or(0);
        if live_tasks > 0 && cancel.is_none() {
            return Err(live_refusal(id, live_tasks));
        }
        diesel::sql_query(TOMBSTONE_SQL)
            .bind::<Text, _>(id.as_str())
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .bind::<Text, _>(DELETED_REASON)
            .execute(conn)
            .await?;
        // A deleted destination keeps no credential.
        diesel::delete(
            destination_secrets::table.filter(destination_secrets::destination_id.eq(id.as_str())),
        )
        .execute(conn)
        .await?;
        headers::replace(conn, id.as_str(), &[]).await?;
        let now = super::super::store_now::now(store, conn).await?;
        let entry = destination_changed(
            AuditAction::DestinationDelete,
            Some(&destination),
            &tombstone(&destination, now),
        );
        audit::record(store, conn, entry).await?;
        let cancel_job = match cancel {
            Some(job) if live_tasks > 0 => Some(jobs::create_on(store, conn, job).await?),
            _ => None,
        };
        tell(conn, id, None).await?;
        Ok(Deleted {
            destination,
            live_tasks,
            cancel_job,
        })
    })
    .await
}

/// The destination, locked until the transaction ends (`for_update`: a
/// lock a schedule's share lock waits for); `NotFound` when there is none
/// or it was deleted.
async fn locked(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
    for_update: bool,
) -> Result<Destination, StoreError> {
    let row = destinations::table
        .find(id.as_str())
        .select(destinations::deleted_at.is_null());
    let present: Option<bool> = if for_update {
        row.for_update().first(conn).await.optional()?
    } else {
        row.for_no_key_update().first(conn).await.optional()?
    };
    if present != Some(true) {
        return Err(StoreError::no_destination(id));
    }
    super::destination_rows::destination_on(conn, id)
        .await?
        .ok_or_else(|| StoreError::no_destination(id))
}

/// Tells every process the destination changed, and (with its region) its
/// region's claimers that work may be due, at commit.
async fn tell(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
    wake: Option<Region>,
) -> Result<(), StoreError> {
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(DESTINATION_CHANNEL)
        .bind::<Text, _>(id.as_str())
        .execute(conn)
        .await?;
    if let Some(region) = wake {
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<Text, _>(DUE_WORK_CHANNEL)
            .bind::<Text, _>(region.as_str())
            .execute(conn)
            .await?;
    }
    Ok(())
}
