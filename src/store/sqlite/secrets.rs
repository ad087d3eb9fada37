//! Signing secrets on SQLite: added with a destination, rotated by the
//! rules of `domain::Rotation`, listed, and read for a send.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{destination_row, instant, maybe, micros};
use crate::domain::{DestinationId, Rotation, SigningSecret, TargetSecret};
use crate::store::StoreError;

#[derive(QueryableByName)]
struct SecretRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    secret: String,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    expires_at: Option<i64>,
}

impl SecretRow {
    fn shown(&self) -> Result<SigningSecret, StoreError> {
        Ok(SigningSecret {
            id: self.id.clone(),
            created_at: instant("destination_secrets.created_at", self.created_at)?,
            expires_at: maybe("destination_secrets.expires_at", self.expires_at)?,
        })
    }
}

/// Every secret of the destination, oldest first.
fn rows(conn: &mut SqliteConnection, id: &DestinationId) -> Result<Vec<SecretRow>, StoreError> {
    Ok(diesel::sql_query(
        "SELECT id, secret, created_at, expires_at FROM destination_secrets \
         WHERE destination_id = ? ORDER BY created_at, rowid",
    )
    .bind::<Text, _>(id.as_str())
    .load(conn)?)
}

/// Stores a new secret, valid until a rotation ends it.
pub(super) fn insert(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    secret: &str,
    now: DateTime<Utc>,
) -> Result<SigningSecret, StoreError> {
    let stored = SigningSecret {
        id: uuid::Uuid::new_v4().to_string(),
        created_at: now,
        expires_at: None,
    };
    diesel::sql_query(
        "INSERT INTO destination_secrets (id, destination_id, secret, created_at) \
         VALUES (?, ?, ?, ?)",
    )
    .bind::<Text, _>(&stored.id)
    .bind::<Text, _>(id.as_str())
    .bind::<Text, _>(secret)
    .bind::<BigInt, _>(micros(now))
    .execute(conn)?;
    Ok(stored)
}

/// The destination's secrets valid at `now`, newest first.
pub(super) fn valid(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    now: DateTime<Utc>,
) -> Result<Vec<TargetSecret>, StoreError> {
    let mut valid = Vec::new();
    for row in rows(conn, id)?.into_iter().rev() {
        let shown = row.shown()?;
        if shown.valid_at(now) {
            valid.push(TargetSecret {
                secret: row.secret,
                expires_at: shown.expires_at,
            });
        }
    }
    Ok(valid)
}

/// The values of the valid secrets, for a repeated registration.
pub(super) fn valid_values(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    now: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    Ok(valid(conn, id, now)?
        .into_iter()
        .map(|s| s.secret)
        .collect())
}

/// Ends the valid secrets at the rotation's end (a sooner end is kept)
/// and adds its secret; run inside the write transaction.
pub(super) fn rotate(
    conn: &mut SqliteConnection,
    id: &DestinationId,
    rotation: Rotation,
    now: DateTime<Utc>,
) -> Result<SigningSecret, StoreError> {
    if destination_row(conn, id)?.is_none() {
        return Err(not_found(id));
    }
    for row in rows(conn, id)? {
        let shown = row.shown()?;
        let end = rotation.new_end(shown.expires_at, now);
        if end != shown.expires_at {
            diesel::sql_query("UPDATE destination_secrets SET expires_at = ? WHERE id = ?")
                .bind::<Nullable<BigInt>, _>(end.map(micros))
                .bind::<Text, _>(&row.id)
                .execute(conn)?;
        }
    }
    insert(conn, id, &rotation.secret, now)
}

/// Every secret of the destination, oldest first, without values.
pub(super) fn list(
    conn: &mut SqliteConnection,
    id: &DestinationId,
) -> Result<Vec<SigningSecret>, StoreError> {
    if destination_row(conn, id)?.is_none() {
        return Err(not_found(id));
    }
    rows(conn, id)?.iter().map(SecretRow::shown).collect()
}

fn not_found(id: &DestinationId) -> StoreError {
    StoreError::NotFound {
        what: "destination",
        id: id.to_string(),
    }
}
