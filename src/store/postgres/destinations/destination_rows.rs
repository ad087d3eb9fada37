//! A destination's own rows on PostgreSQL: registration (and the revival
//! of a deleted id), reads, the pause, disabling and enabling, the row
//! lock an operator's change takes, and the settling of disabled
//! destinations' tasks past their horizon.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::audit;
use super::super::connection::notify::DESTINATION_CHANNEL;
use super::super::tables::rows::DestinationRow;
use super::super::tables::schema::destinations;
use super::{headers, secrets};
use crate::domain::{settings_reset_sql, AuditAction, Destination, DestinationId, NewDestination};
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries::destination_changed;
use crate::store::rules::destination_change::{revived_elsewhere, revived_while_cancelling};
use crate::store::rules::requests;

pub(in crate::store::postgres) async fn add_destination(
    store: &PgStore,
    new: NewDestination,
) -> Result<Destination, StoreError> {
    use diesel_async::AsyncConnection as _;

    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = super::super::store_now::now(store, conn).await?;
        let inserted: Option<DestinationRow> = diesel::insert_into(destinations::table)
            .values((
                destinations::id.eq(new.id.as_str()),
                destinations::region.eq(new.region.as_str()),
                destinations::url.eq(new.url.as_str()),
                destinations::disable_after_seconds.eq(new.overrides.after_seconds),
                destinations::disable_after_failures.eq(new
                    .overrides
                    .failures
                    .map(|f| f.min(i32::MAX as u32) as i32)),
            ))
            .on_conflict_do_nothing()
            .returning(DestinationRow::as_returning())
            .get_result(conn)
            .await
            .optional()?;
        if let Some(row) = inserted {
            let mut destination = Destination::try_from(row)?;
            if let Some(secret) = &new.signing_secret {
                secrets::insert(conn, &store.key, &new.id, secret, now).await?;
                destination.has_signing_secret = true;
            }
            let entry = destination_changed(AuditAction::DestinationCreate, None, &destination);
            audit::record(store, conn, entry).await?;
            return Ok(destination);
        }
        // Deleted: registered again, as new.
        if revive(conn, &new).await? {
            let mut destination = destination_on(conn, &new.id)
                .await?
                .ok_or_else(|| StoreError::no_destination(&new.id))?;
            if let Some(secret) = &new.signing_secret {
                secrets::insert(conn, &store.key, &new.id, secret, now).await?;
                destination.has_signing_secret = true;
            }
            let entry = destination_changed(AuditAction::DestinationCreate, None, &destination);
            audit::record(store, conn, entry).await?;
            // Processes that held it as deleted read it again.
            diesel::sql_query("SELECT pg_notify($1, $2)")
                .bind::<diesel::sql_types::Text, _>(DESTINATION_CHANNEL)
                .bind::<diesel::sql_types::Text, _>(new.id.as_str())
                .execute(conn)
                .await?;
            return Ok(destination);
        }
        // Registered before: the same settings are a repeat, others a conflict.
        let row = destinations::table
            .find(new.id.as_str())
            .select(DestinationRow::as_select())
            .first::<DestinationRow>(conn)
            .await?;
        let valid = secrets::valid(conn, &store.key, &[new.id.as_str()], Some(now)).await?;
        let values: Vec<String> = valid.into_values().flatten().map(|s| s.secret).collect();
        let same = requests::same_destination_or_conflict(row.try_into()?, &values, &new)?;
        // A repeat is recorded too: someone asked, and nothing changed.
        let entry = destination_changed(AuditAction::DestinationCreate, Some(&same), &same);
        audit::record(store, conn, entry).await?;
        Ok(same)
    })
    .await
}

/// $1 the id, $2 the region, $3 the URL, $4 and $5 the thresholds: a
/// deleted destination of the same region comes back as if new, its
/// bucket, quota, history of health and own settings forgotten.
static REVIVE_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "UPDATE destinations
         SET url = $3, disable_after_seconds = $4, disable_after_failures = $5, deleted_at = NULL,
             enabled = true, paused_until = NULL, failure_streak = 0, failure_streak_since = NULL,
             disabled_reason = NULL, disabled_at = NULL, last_error = NULL, last_error_at = NULL,
             refused = NULL, refused_at = NULL, rate_tokens = NULL, rate_refilled_at = NULL,
             quota_remaining = NULL, quota_resets_at = NULL, quota_limit = NULL,
             quota_learned_at = NULL, quota_token = NULL, quota_window_ms = NULL, {},
             updated_at = now()
         WHERE id = $1 AND region = $2 AND deleted_at IS NOT NULL",
        settings_reset_sql()
    )
});

#[derive(diesel::QueryableByName)]
struct Live {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    live: i64,
}

/// Registers a deleted destination again; `false` when the id is not a
/// deleted one. A deleted destination of another region is a conflict: the
/// tasks that ended under it keep its region until retention prunes them.
async fn revive(conn: &mut AsyncPgConnection, new: &NewDestination) -> Result<bool, StoreError> {
    use diesel::sql_types::{BigInt, Integer, Nullable, Text};
    let tombstone: Option<String> = destinations::table
        .find(new.id.as_str())
        .filter(destinations::deleted_at.is_not_null())
        .select(destinations::region)
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let Some(region) = tombstone else {
        return Ok(false);
    };
    if region != new.region.as_str() {
        return Err(revived_elsewhere(new, &region));
    }
    let live: Live = diesel::sql_query(
        "SELECT count(*) AS live FROM task_queue WHERE region = $2 AND destination_id = $1",
    )
    .bind::<Text, _>(new.id.as_str())
    .bind::<Text, _>(new.region.as_str())
    .get_result(conn)
    .await?;
    if live.live > 0 {
        return Err(revived_while_cancelling(
            new,
            u64::try_from(live.live).unwrap_or(0),
        ));
    }
    diesel::sql_query(REVIVE_SQL.as_str())
        .bind::<Text, _>(new.id.as_str())
        .bind::<Text, _>(new.region.as_str())
        .bind::<Text, _>(new.url.as_str())
        .bind::<Nullable<BigInt>, _>(new.overrides.after_seconds)
        .bind::<Nullable<Integer>, _>(
            new.overrides
                .failures
                .map(|f| f.min(i32::MAX as u32) as i32),
        )
        .execute(conn)
        .await?;
    Ok(true)
}

pub(in crate::store::postgres) async fn destination(
    store: &PgStore,
    id: &DestinationId,
) -> Result<Option<Destination>, StoreError> {
    let mut conn = store.conn().await?;
    destination_on(&mut conn, id).await
}

pub(in crate::store::postgres) async fn destination_on(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
) -> Result<Option<Destination>, StoreError> {
    let Some(row) = destinations::table
        .find(id.as_str())
        .filter(destinations::deleted_at.is_null())
        .select(DestinationRow::as_select())
        .first(conn)
        .await
        .optional()?
    else {
        return Ok(None);
    };
    let mut destination = Destination::try_from(row)?;
    let records = headers::records(conn, &[id.as_str()]).await?;
    destination.settings.headers = records
        .get(id.as_str())
        .map(|rs| rs.iter().map(|r| r.shown()).collect())
        .unwrap_or_default();
    Ok(Some(destination))
}

pub(in crate::store::postgres) async fn pause_destination(
    store: &PgStore,
    id: &DestinationId,
    pause: chrono::Duration,
) -> Result<DateTime<Utc>, StoreError> {
    let mut conn = store.conn().await?;
    pause_on(store, &mut conn, id, pause).await
}

/// `GREATEST` ignores NULL, so an unpaused destination takes the new end
/// and a later existing pause is kept.
const PAUSE_SQL: &str = r#"
UPDATE destinations
SET paused_until = GREATEST(paused_until, coalesce($2, now()) + $3 * interval '1 millisecond'),
    updated_at = now()
WHERE id = $1 AND deleted_at IS NULL
RETURNING paused_until
"#;

#[derive(diesel::QueryableByName)]
struct Paused {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>)]
    paused_until: Option<DateTime<Utc>>,
}

/// Pauses the destination for `pause` after the store's now, on `conn`
/// (possibly inside the finish's transaction), and notifies every process of the region when that commits,
/// so their queued and about-to-start requests hold too.
pub(in crate::store::postgres) async fn pause_on(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
    pause: chrono::Duration,
) -> Result<DateTime<Utc>, StoreError> {
    use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
    let paused: Option<Paused> = diesel::sql_query(PAUSE_SQL)
        .bind::<Text, _>(id.as_str())
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<BigInt, _>(super::super::tables::rows::delay_millis(pause))
        .get_result(conn)
        .await
        .optional()?;
    let in_force = paused
        .and_then(|p| p.paused_until)
        .ok_or_else(|| StoreError::no_destination(id))?;
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(DESTINATION_CHANNEL)
        .bind::<Text, _>(id.as_str())
        .execute(conn)
        .await?;
    Ok(in_force)
}

/// $1 the destination, $2 the reason, $3 the store's now (NULL: the
/// database's). One already disabled keeps its reason and time; one that
/// changes records its event in the outbox in the same statement.
const DISABLE_SQL: &str = r#"
WITH clock AS (SELECT coalesce($3, now()) AS now),
was AS (SELECT id, enabled FROM destinations WHERE id = $1 AND deleted_at IS NULL
        FOR NO KEY UPDATE),
changed AS (
    UPDATE destinations d
    SET disabled_reason = $2, disabled_at = clock.now, enabled = false, updated_at = now()
    FROM was, clock
    WHERE d.id = was.id AND was.enabled
    RETURNING d.id, d.region, d.disabled_reason, d.last_error
)
INSERT INTO destination_events (id, kind, destination_id, region, reason, at, last_error)
SELECT gen_random_uuid(), 'destination.disabled', c.id, c.region, c.disabled_reason,
       clock.now, c.last_error
FROM changed c, clock
"#;

/// $1 the destination, $2 the store's now. The streak and the reason go;
/// the last error stays. One that was disabled records its event. A
/// deleted one stays as it is (and is answered as not found).
const ENABLE_SQL: &str = r#"
WITH clock AS (SELECT coalesce($2, now()) AS now),
was AS (SELECT id, enabled FROM destinations WHERE id = $1 AND deleted_at IS NULL
        FOR NO KEY UPDATE),
changed AS (
    UPDATE destinations d
    SET enabled = true, failure_streak = 0, failure_streak_since = NULL,
        disabled_reason = NULL, disabled_at = NULL, updated_at = now()
    FROM was
    WHERE d.id = was.id
    RETURNING d.id, d.region, d.last_error, was.enabled AS was_enabled
)
INSERT INTO destination_events (id, kind, destination_id, region, reason, at, last_error)
SELECT gen_random_uuid(), 'destination.enabled', c.id, c.region, NULL, clock.now, c.last_error
FROM changed c, clock
WHERE NOT c.was_enabled
"#;

pub(in crate::store::postgres) async fn disable(
    store: &PgStore,
    id: &DestinationId,
    reason: Option<String>,
) -> Result<Destination, StoreError> {
    use diesel::sql_types::{Nullable, Text, Timestamptz};
    use diesel_async::AsyncConnection as _;
    let reason = reason.unwrap_or_else(|| crate::policy::MANUAL_REASON.to_owned());
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let before = locked(conn, id).await?;
        diesel::sql_query(DISABLE_SQL)
            .bind::<Text, _>(id.as_str())
            .bind::<Text, _>(reason)
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .execute(conn)
            .await?;
        let after = changed(conn, id, false).await?;
        let entry = destination_changed(AuditAction::DestinationDisable, Some(&before), &after);
        audit::record(store, conn, entry).await?;
        Ok(after)
    })
    .await
}

/// Enables the destination and wakes its region's claimers.
pub(in crate::store::postgres) async fn enable(
    store: &PgStore,
    id: &DestinationId,
) -> Result<Destination, StoreError> {
    use diesel::sql_types::{Nullable, Text, Timestamptz};
    use diesel_async::AsyncConnection as _;
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let before = locked(conn, id).await?;
        diesel::sql_query(ENABLE_SQL)
            .bind::<Text, _>(id.as_str())
            .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
            .execute(conn)
            .await?;
        let after = changed(conn, id, true).await?;
        let entry = destination_changed(AuditAction::DestinationEnable, Some(&before), &after);
        audit::record(store, conn, entry).await?;
        Ok(after)
    })
    .await
}

/// The destination as it is, its row locked until the transaction ends
/// (an admin change reads it for the audit entry's `before`).
pub(in crate::store) async fn locked(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
) -> Result<Destination, StoreError> {
    destinations::table
        .find(id.as_str())
        .select(DestinationRow::as_select())
        .for_no_key_update()
        .first(conn)
        .await
        .optional()?
        .map(Destination::try_from)
        .transpose()?
        .ok_or_else(|| StoreError::no_destination(id))
}

/// The destination after a change, with every process told (and, when it
/// has work again, its region's claimers woken).
async fn changed(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
    wake: bool,
) -> Result<Destination, StoreError> {
    use diesel::sql_types::Text;
    let d = destination_on(conn, id)
        .await?
        .ok_or_else(|| StoreError::no_destination(id))?;
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(DESTINATION_CHANNEL)
        .bind::<Text, _>(id.as_str())
        .execute(conn)
        .await?;
    if wake {
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<Text, _>(super::super::connection::notify::DUE_WORK_CHANNEL)
            .bind::<Text, _>(d.region.as_str())
            .execute(conn)
            .await?;
    }
    Ok(d)
}
