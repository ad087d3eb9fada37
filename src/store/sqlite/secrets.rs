//! Signing secrets on SQLite: added (sealed) with a destination, rotated
//! by the rules of `domain::Rotation`, listed, read for a send, and sealed
//! when left in clear.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::audit;
use super::rows::{destination_row, instant, maybe, micros};
use super::store::Ctx;
use crate::domain::{DestinationId, Rotation, SigningSecret, TargetSecret};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{SecretRecord, StoreError, StoredValue};
use crate::store::rules::audit_entries;

#[derive(QueryableByName)]
struct SecretRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Nullable<Text>)]
    secret: Option<String>,
    #[diesel(sql_type = Nullable<Binary>)]
    key_fingerprint: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Binary>)]
    nonce: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Binary>)]
    ciphertext: Option<Vec<u8>>,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    expires_at: Option<i64>,
}

const COLUMNS: &str =
    "id, destination_id, secret, key_fingerprint, nonce, ciphertext, created_at, expires_at";

impl SecretRow {
    fn record(self) -> Result<SecretRecord, StoreError> {
        Ok(SecretRecord {
            created_at: instant("destination_secrets.created_at", self.created_at)?,
            expires_at: maybe("destination_secrets.expires_at", self.expires_at)?,
            value: StoredValue::from_columns(
                self.secret,
                self.key_fingerprint,
                self.nonce,
                self.ciphertext,
            )?,
            id: self.id,
        })
    }
}

/// Every secret of the destination, oldest first, still sealed.
pub(super) fn records(
    conn: &mut SqliteConnection,
    id: &DestinationId,
) -> Result<Vec<SecretRecord>, StoreError> {
    let rows: Vec<SecretRow> = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM destination_secrets \
         WHERE destination_id = ? ORDER BY created_at, rowid"
    ))
    .bind::<Text, _>(id.as_str())
    .load(conn)?;
    rows.into_iter().map(SecretRow::record).collect()
}

/// Stores a new secret, sealed with `key`, valid until a rotation ends it.
pub(super) fn insert(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    destination: &DestinationId,
    secret: &str,
    now: DateTime<Utc>,
) -> Result<SigningSecret, StoreError> {
    let id = uuid::Uuid::new_v4().to_string();
    let record = SecretRecord {
        value: StoredValue::Sealed(key.seal_secret(&id, destination.as_str(), secret)),
        id,
        created_at: now,
        expires_at: None,
    };
    insert_record(conn, destination, &record)?;
    Ok(SigningSecret {
        id: record.id,
        created_at: now,
        expires_at: None,
    })
}

/// Writes a secret's row as given (an import keeps ids and sealed bytes).
pub(super) fn insert_record(
    conn: &mut SqliteConnection,
    destination: &DestinationId,
    record: &SecretRecord,
) -> Result<(), StoreError> {
    let (secret, sealed) = match &record.value {
        StoredValue::Clear(secret) => (Some(secret.as_str()), None),
        StoredValue::Sealed(sealed) => (None, Some(sealed)),
    };
    diesel::sql_query(format!(
        "INSERT INTO destination_secrets ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    ))
    .bind::<Text, _>(&record.id)
    .bind::<Text, _>(destination.as_str())
    .bind::<Nullable<Text>, _>(secret)
    .bind::<Nullable<Binary>, _>(sealed.map(|s| s.key_fingerprint.as_slice()))
    .bind::<Nullable<Binary>, _>(sealed.map(|s| s.nonce.as_slice()))
    .bind::<Nullable<Binary>, _>(sealed.map(|s| s.ciphertext.as_slice()))
    .bind::<BigInt, _>(micros(record.created_at))
    .bind::<Nullable<BigInt>, _>(record.expires_at.map(micros))
    .execute(conn)?;
    // An imported secret may be sealed under a key this file has not seen:
    // record it, so a process without that key is refused at start rather
    // than failing each send to the destination.
    if let Some(sealed) = sealed {
        diesel::sql_query(
            "INSERT OR IGNORE INTO payload_keys (fingerprint, recorded_at) VALUES (?, ?)",
        )
        .bind::<Binary, _>(&sealed.key_fingerprint)
        .bind::<BigInt, _>(micros(record.created_at))
        .execute(conn)?;
    }
    Ok(())
}

/// The destination's secrets valid at `now`, newest first, opened.
pub(super) fn valid(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    id: &DestinationId,
    now: DateTime<Utc>,
) -> Result<Vec<TargetSecret>, StoreError> {
    let mut valid = Vec::new();
    for record in records(conn, id)?.into_iter().rev() {
        if crate::domain::valid_at(record.expires_at, now) {
            valid.push(TargetSecret {
                secret: record.value.open(key, &record.id, id.as_str())?,
                expires_at: record.expires_at,
            });
        }
    }
    Ok(valid)
}

/// The values of the valid secrets, for a repeated registration.
pub(super) fn valid_values(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    id: &DestinationId,
    now: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    Ok(valid(conn, key, id, now)?
        .into_iter()
        .map(|s| s.secret)
        .collect())
}

/// Ends the valid secrets at the rotation's end (a sooner end is kept)
/// and adds its secret; run inside the write transaction.
/// Ends the secrets valid until now at the rotation's end, adds the new
/// one, and writes the audit entry (the secrets by id and expiry).
pub(super) fn rotate(
    conn: &mut SqliteConnection,
    ctx: &Ctx,
    id: &DestinationId,
    rotation: Rotation,
) -> Result<SigningSecret, StoreError> {
    let (key, now) = (&ctx.key, ctx.now);
    let region = destination_row(conn, id)?
        .ok_or_else(|| StoreError::no_destination(id))?
        .destination()?
        .region;
    let before = list(conn, id)?;
    for record in records(conn, id)? {
        let end = rotation.new_end(record.expires_at, now);
        if end != record.expires_at {
            diesel::sql_query("UPDATE destination_secrets SET expires_at = ? WHERE id = ?")
                .bind::<Nullable<BigInt>, _>(end.map(micros))
                .bind::<Text, _>(&record.id)
                .execute(conn)?;
        }
    }
    let added = insert(conn, key, id, &rotation.secret, now)?;
    let after = list(conn, id)?;
    let entry = audit_entries::secret_rotated(id, region, &before, &after);
    audit::record(conn, ctx, entry)?;
    Ok(added)
}

/// Every secret of the destination, oldest first, without values.
pub(super) fn list(
    conn: &mut SqliteConnection,
    id: &DestinationId,
) -> Result<Vec<SigningSecret>, StoreError> {
    if destination_row(conn, id)?.is_none() {
        return Err(StoreError::no_destination(id));
    }
    Ok(records(conn, id)?
        .into_iter()
        .map(|r| SigningSecret {
            id: r.id,
            created_at: r.created_at,
            expires_at: r.expires_at,
        })
        .collect())
}

/// Seals every secret still in clear with `key`; run inside the write
/// transaction. Returns how many it sealed.
pub(super) fn seal_clear(conn: &mut SqliteConnection, key: &PayloadKey) -> Result<u64, StoreError> {
    let clear: Vec<SecretRow> = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM destination_secrets WHERE secret IS NOT NULL"
    ))
    .load(conn)?;
    let mut sealed_rows = 0;
    for row in clear {
        let Some(secret) = &row.secret else { continue };
        let sealed = key.seal_secret(&row.id, &row.destination_id, secret);
        sealed_rows += diesel::sql_query(
            "UPDATE destination_secrets SET secret = NULL, key_fingerprint = ?, nonce = ?, \
             ciphertext = ? WHERE id = ? AND secret IS NOT NULL",
        )
        .bind::<Binary, _>(&sealed.key_fingerprint)
        .bind::<Binary, _>(&sealed.nonce)
        .bind::<Binary, _>(&sealed.ciphertext)
        .bind::<Text, _>(&row.id)
        .execute(conn)? as u64;
    }
    Ok(sealed_rows)
}
