//! Signing secrets on PostgreSQL: adding one when a destination is
//! registered, rotating, listing, and reading the valid ones of many
//! destinations at once for their sends.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::notify::DESTINATION_CHANNEL;
use super::schema::{destination_secrets, destinations};
use super::{PgStore, StoreError};
use crate::domain::{DestinationId, Rotation, SigningSecret, TargetSecret};

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
}

/// The store's now: the pinned clock, or the database's.
pub(super) async fn now(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
) -> Result<DateTime<Utc>, StoreError> {
    let now: Now = diesel::sql_query("SELECT coalesce($1, now()) AS now")
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .get_result(conn)
        .await?;
    Ok(now.now)
}

/// Stores a new secret, valid until a rotation ends it.
pub(super) async fn insert(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
    secret: &str,
    now: DateTime<Utc>,
) -> Result<SigningSecret, StoreError> {
    let stored = SigningSecret {
        id: uuid::Uuid::new_v4().to_string(),
        created_at: now,
        expires_at: None,
    };
    diesel::insert_into(destination_secrets::table)
        .values((
            destination_secrets::id.eq(&stored.id),
            destination_secrets::destination_id.eq(id.as_str()),
            destination_secrets::secret.eq(secret),
            destination_secrets::created_at.eq(now),
        ))
        .execute(conn)
        .await?;
    Ok(stored)
}

/// The secrets of `ids` valid at `now` (the database's now when `None`),
/// newest first, in one statement.
pub(super) async fn valid(
    conn: &mut AsyncPgConnection,
    ids: &[&str],
    now: Option<DateTime<Utc>>,
) -> Result<HashMap<String, Vec<TargetSecret>>, StoreError> {
    let unexpired = diesel::dsl::sql::<diesel::sql_types::Bool>(
        "(destination_secrets.expires_at IS NULL OR destination_secrets.expires_at > coalesce(",
    )
    .bind::<Nullable<Timestamptz>, _>(now)
    .sql(", now()))");
    let rows: Vec<(String, String, Option<DateTime<Utc>>)> = destination_secrets::table
        .filter(destination_secrets::destination_id.eq_any(ids))
        .filter(unexpired)
        .order((
            destination_secrets::created_at.desc(),
            destination_secrets::seq.desc(),
        ))
        .select((
            destination_secrets::destination_id,
            destination_secrets::secret,
            destination_secrets::expires_at,
        ))
        .load(conn)
        .await?;
    let mut found: HashMap<String, Vec<TargetSecret>> = HashMap::new();
    for (destination, secret, expires_at) in rows {
        found
            .entry(destination)
            .or_default()
            .push(TargetSecret { secret, expires_at });
    }
    Ok(found)
}

/// Adds the rotation's secret and ends the valid ones at its
/// `old_expires_at` (a sooner end is kept), in one transaction that holds
/// the destination's row, so two rotations take turns.
pub(super) async fn rotate(
    store: &PgStore,
    id: &DestinationId,
    rotation: Rotation,
) -> Result<SigningSecret, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = now(store, conn).await?;
        let exists: Option<String> = destinations::table
            .find(id.as_str())
            .select(destinations::id)
            .for_update()
            .first(conn)
            .await
            .optional()?;
        if exists.is_none() {
            return Err(not_found(id));
        }
        // LEAST ignores NULL: a secret without an end takes the rotation's.
        diesel::sql_query(
            "UPDATE destination_secrets SET expires_at = LEAST(expires_at, $2) \
             WHERE destination_id = $1 AND (expires_at IS NULL OR expires_at > $3)",
        )
        .bind::<diesel::sql_types::Text, _>(id.as_str())
        .bind::<Timestamptz, _>(rotation.old_expires_at)
        .bind::<Timestamptz, _>(now)
        .execute(conn)
        .await?;
        let added = insert(conn, id, &rotation.secret, now).await?;
        // Every process forgets what it keeps of the destination when this
        // commits, so the next send reads the new secret.
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<diesel::sql_types::Text, _>(DESTINATION_CHANNEL)
            .bind::<diesel::sql_types::Text, _>(id.as_str())
            .execute(conn)
            .await?;
        Ok(added)
    })
    .await
}

/// Every secret of the destination, oldest first, without values.
pub(super) async fn list(
    store: &PgStore,
    id: &DestinationId,
) -> Result<Vec<SigningSecret>, StoreError> {
    let mut conn = store.conn().await?;
    let exists: Option<String> = destinations::table
        .find(id.as_str())
        .select(destinations::id)
        .first(&mut conn)
        .await
        .optional()?;
    if exists.is_none() {
        return Err(not_found(id));
    }
    let rows: Vec<(String, DateTime<Utc>, Option<DateTime<Utc>>)> = destination_secrets::table
        .filter(destination_secrets::destination_id.eq(id.as_str()))
        .order((destination_secrets::created_at, destination_secrets::seq))
        .select((
            destination_secrets::id,
            destination_secrets::created_at,
            destination_secrets::expires_at,
        ))
        .load(&mut conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, created_at, expires_at)| SigningSecret {
            id,
            created_at,
            expires_at,
        })
        .collect())
}

fn not_found(id: &DestinationId) -> StoreError {
    StoreError::NotFound {
        what: "destination",
        id: id.to_string(),
    }
}
