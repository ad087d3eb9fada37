//! Signing secrets on PostgreSQL: adding one (sealed) when a destination
//! is registered, rotating, listing, reading the valid ones of many
//! destinations at once for their sends, and sealing any left in clear.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::super::audit;
use super::super::connection::notify::DESTINATION_CHANNEL;
use super::super::tables::schema::{destination_secrets, destinations};
use crate::domain::{DestinationId, Rotation, SigningSecret, TargetSecret};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{SecretRecord, StoreError, StoredValue};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries;

/// A secret's row.
#[derive(Queryable, Selectable)]
#[diesel(table_name = destination_secrets)]
struct SecretRow {
    id: String,
    destination_id: String,
    secret: Option<String>,
    key_fingerprint: Option<Vec<u8>>,
    nonce: Option<Vec<u8>>,
    ciphertext: Option<Vec<u8>>,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
}

impl SecretRow {
    fn record(self) -> Result<(String, SecretRecord), StoreError> {
        let value = StoredValue::from_columns(
            self.secret,
            self.key_fingerprint,
            self.nonce,
            self.ciphertext,
        )?;
        Ok((
            self.destination_id,
            SecretRecord {
                id: self.id,
                created_at: self.created_at,
                expires_at: self.expires_at,
                value,
            },
        ))
    }
}

/// Stores a new secret, sealed with `key`, valid until a rotation ends it.
pub(in crate::store::postgres) async fn insert(
    conn: &mut AsyncPgConnection,
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
    insert_record(conn, destination, &record).await?;
    Ok(SigningSecret {
        id: record.id,
        created_at: now,
        expires_at: None,
    })
}

/// Writes a secret's row as given (an import keeps ids and sealed bytes).
pub(in crate::store::postgres) async fn insert_record(
    conn: &mut AsyncPgConnection,
    destination: &DestinationId,
    record: &SecretRecord,
) -> Result<(), StoreError> {
    let (secret, sealed) = match &record.value {
        StoredValue::Clear(secret) => (Some(secret.as_str()), None),
        StoredValue::Sealed(sealed) => (None, Some(sealed)),
    };
    diesel::insert_into(destination_secrets::table)
        .values((
            destination_secrets::id.eq(&record.id),
            destination_secrets::destination_id.eq(destination.as_str()),
            destination_secrets::secret.eq(secret),
            destination_secrets::key_fingerprint.eq(sealed.map(|s| &s.key_fingerprint)),
            destination_secrets::nonce.eq(sealed.map(|s| &s.nonce)),
            destination_secrets::ciphertext.eq(sealed.map(|s| &s.ciphertext)),
            destination_secrets::created_at.eq(record.created_at),
            destination_secrets::expires_at.eq(record.expires_at),
        ))
        .execute(conn)
        .await?;
    // An imported secret may be sealed under a key this database has not
    // seen: record it, so a process without that key is refused at start
    // rather than failing each send to the destination.
    if let Some(sealed) = sealed {
        diesel::sql_query(
            "INSERT INTO payload_keys (fingerprint, recorded_at) VALUES ($1, now()) \
             ON CONFLICT DO NOTHING",
        )
        .bind::<diesel::sql_types::Bytea, _>(&sealed.key_fingerprint)
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// The secrets of `ids` valid at `now` (the database's now when `None`),
/// newest first, still sealed, in one statement.
pub(in crate::store::postgres) async fn valid_records(
    conn: &mut AsyncPgConnection,
    ids: &[&str],
    now: Option<DateTime<Utc>>,
) -> Result<HashMap<String, Vec<SecretRecord>>, StoreError> {
    let unexpired = diesel::dsl::sql::<diesel::sql_types::Bool>(
        "(destination_secrets.expires_at IS NULL OR destination_secrets.expires_at > coalesce(",
    )
    .bind::<Nullable<Timestamptz>, _>(now)
    .sql(", now()))");
    let rows: Vec<SecretRow> = destination_secrets::table
        .filter(destination_secrets::destination_id.eq_any(ids))
        .filter(unexpired)
        .order((
            destination_secrets::created_at.desc(),
            destination_secrets::seq.desc(),
        ))
        .select(SecretRow::as_select())
        .load(conn)
        .await?;
    let mut found: HashMap<String, Vec<SecretRecord>> = HashMap::new();
    for row in rows {
        let (destination, record) = row.record()?;
        found.entry(destination).or_default().push(record);
    }
    Ok(found)
}

/// [`valid_records`], opened with `key`.
pub(in crate::store::postgres) async fn valid(
    conn: &mut AsyncPgConnection,
    key: &PayloadKey,
    ids: &[&str],
    now: Option<DateTime<Utc>>,
) -> Result<HashMap<String, Vec<TargetSecret>>, StoreError> {
    let mut opened = HashMap::new();
    for (destination, records) in valid_records(conn, ids, now).await? {
        let secrets = records
            .into_iter()
            .map(|r| {
                Ok(TargetSecret {
                    secret: r.value.open(key, &r.id, &destination)?,
                    expires_at: r.expires_at,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        opened.insert(destination, secrets);
    }
    Ok(opened)
}

/// Every secret of each destination, oldest first, still sealed (for an
/// export).
pub(in crate::store::postgres) async fn all_records(
    conn: &mut AsyncPgConnection,
    ids: &[&str],
) -> Result<HashMap<String, Vec<SecretRecord>>, StoreError> {
    let rows: Vec<SecretRow> = destination_secrets::table
        .filter(destination_secrets::destination_id.eq_any(ids))
        .order((destination_secrets::created_at, destination_secrets::seq))
        .select(SecretRow::as_select())
        .load(conn)
        .await?;
    let mut found: HashMap<String, Vec<SecretRecord>> = HashMap::new();
    for row in rows {
        let (destination, record) = row.record()?;
        found.entry(destination).or_default().push(record);
    }
    Ok(found)
}

/// Adds the rotation's secret and ends the valid ones at its
/// `old_expires_at` (a sooner end is kept), in one transaction that holds
/// the destination's row, so two rotations take turns.
pub(in crate::store::postgres) async fn rotate(
    store: &PgStore,
    id: &DestinationId,
    rotation: Rotation,
) -> Result<SigningSecret, StoreError> {
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let now = super::super::store_now::now(store, conn).await?;
        let region: String = destinations::table
            .find(id.as_str())
            .filter(destinations::deleted_at.is_null())
            .select(destinations::region)
            .for_update()
            .first(conn)
            .await
            .optional()?
            .ok_or_else(|| StoreError::no_destination(id))?;
        let before = listed(conn, id).await?;
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
        let added = insert(conn, &store.key, id, &rotation.secret, now).await?;
        // Every process forgets what it keeps of the destination when this
        // commits, so the next send reads the new secret.
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<diesel::sql_types::Text, _>(DESTINATION_CHANNEL)
            .bind::<diesel::sql_types::Text, _>(id.as_str())
            .execute(conn)
            .await?;
        let after = listed(conn, id).await?;
        let region = super::super::tables::rows::region("destinations.region", &region)?;
        let entry = audit_entries::secret_rotated(id, region, &before, &after);
        audit::record(store, conn, entry).await?;
        Ok(added)
    })
    .await
}

/// Every secret of the destination, oldest first, without values.
pub(in crate::store::postgres) async fn list(
    store: &PgStore,
    id: &DestinationId,
) -> Result<Vec<SigningSecret>, StoreError> {
    let mut conn = store.conn().await?;
    let exists: Option<String> = destinations::table
        .find(id.as_str())
        .filter(destinations::deleted_at.is_null())
        .select(destinations::id)
        .first(&mut conn)
        .await
        .optional()?;
    if exists.is_none() {
        return Err(StoreError::no_destination(id));
    }
    listed(&mut conn, id).await
}

/// The destination's secrets, oldest first, without values.
async fn listed(
    conn: &mut AsyncPgConnection,
    id: &DestinationId,
) -> Result<Vec<SigningSecret>, StoreError> {
    let rows: Vec<(String, DateTime<Utc>, Option<DateTime<Utc>>)> = destination_secrets::table
        .filter(destination_secrets::destination_id.eq(id.as_str()))
        .order((destination_secrets::created_at, destination_secrets::seq))
        .select((
            destination_secrets::id,
            destination_secrets::created_at,
            destination_secrets::expires_at,
        ))
        .load(conn)
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

/// Seals every secret still in clear with the store's key, each row's
/// update guarded so a concurrent sealing is not repeated. Returns how
/// many it sealed.
pub(in crate::store) async fn seal_clear(store: &PgStore) -> Result<u64, StoreError> {
    let mut conn = store.conn().await?;
    let clear: Vec<(String, String, Option<String>)> = destination_secrets::table
        .filter(destination_secrets::secret.is_not_null())
        .select((
            destination_secrets::id,
            destination_secrets::destination_id,
            destination_secrets::secret,
        ))
        .load(&mut conn)
        .await?;
    let mut sealed_rows = 0;
    for (id, destination, secret) in clear {
        let Some(secret) = secret else { continue };
        let sealed = store.key.seal_secret(&id, &destination, &secret);
        sealed_rows += diesel::update(
            destination_secrets::table
                .filter(destination_secrets::id.eq(&id))
                .filter(destination_secrets::secret.is_not_null()),
        )
        .set((
            destination_secrets::secret.eq(None::<String>),
            destination_secrets::key_fingerprint.eq(Some(sealed.key_fingerprint)),
            destination_secrets::nonce.eq(Some(sealed.nonce)),
            destination_secrets::ciphertext.eq(Some(sealed.ciphertext)),
        ))
        .execute(&mut conn)
        .await? as u64;
    }
    Ok(sealed_rows)
}
