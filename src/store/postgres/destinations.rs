//! Registering destinations, reading them for a send, and pausing them
//! after a 429.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::notify::DESTINATION_CHANNEL;
use super::rows::DestinationRow;
use super::schema::destinations;
use super::{rules, secrets, PgStore, StoreError};
use crate::domain::{Destination, DestinationId, NewDestination};

pub(super) async fn add_destination(
    store: &PgStore,
    new: NewDestination,
) -> Result<Destination, StoreError> {
    use diesel_async::AsyncConnection as _;

    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = secrets::now(store, conn).await?;
        let inserted: Option<DestinationRow> = diesel::insert_into(destinations::table)
            .values((
                destinations::id.eq(new.id.as_str()),
                destinations::region.eq(new.region.as_str()),
                destinations::url.eq(new.url.as_str()),
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
        rules::same_destination_or_conflict(row.try_into()?, &values, &new)
    })
    .await
}

pub(super) async fn destination(
    store: &PgStore,
    id: &DestinationId,
) -> Result<Option<Destination>, StoreError> {
    let mut conn = store.conn().await?;
    destinations::table
        .find(id.as_str())
        .select(DestinationRow::as_select())
        .first(&mut conn)
        .await
        .optional()?
        .map(Destination::try_from)
        .transpose()
}

pub(super) async fn pause_destination(
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
WHERE id = $1
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
pub(super) async fn pause_on(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
    pause: chrono::Duration,
) -> Result<DateTime<Utc>, StoreError> {
    use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
    let paused: Option<Paused> = diesel::sql_query(PAUSE_SQL)
        .bind::<Text, _>(id.as_str())
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<BigInt, _>(super::transitions::delay_millis(pause))
        .get_result(conn)
        .await
        .optional()?;
    let in_force = paused
        .and_then(|p| p.paused_until)
        .ok_or_else(|| not_found(id))?;
    diesel::sql_query("SELECT pg_notify($1, $2)")
        .bind::<Text, _>(DESTINATION_CHANNEL)
        .bind::<Text, _>(id.as_str())
        .execute(conn)
        .await?;
    Ok(in_force)
}

fn not_found(id: &DestinationId) -> StoreError {
    StoreError::NotFound {
        what: "destination",
        id: id.to_string(),
    }
}
