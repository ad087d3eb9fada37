//! A destination's custom header rows on SQLite: read for display (a
//! secret's hint only) or for a send (opened), replaced as a whole by a
//! change, written as they come by an import.

use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use crate::domain::CustomHeader;
use crate::payload_crypto::{PayloadKey, SealedPayload};
use crate::store::contract::{HeaderRecord, StoreError, StoredHeader};

#[derive(QueryableByName)]
struct HeaderRow {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
    #[diesel(sql_type = Nullable<Binary>)]
    key_fingerprint: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Binary>)]
    nonce: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Binary>)]
    ciphertext: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Text>)]
    hint: Option<String>,
}

/// The destination's header rows, in order, still sealed.
pub(super) fn records(
    conn: &mut SqliteConnection,
    destination: &str,
) -> Result<Vec<HeaderRecord>, StoreError> {
    let rows: Vec<HeaderRow> = diesel::sql_query(
        "SELECT name, value, key_fingerprint, nonce, ciphertext, hint \
         FROM destination_headers WHERE destination_id = ? ORDER BY position",
    )
    .bind::<Text, _>(destination)
    .load(conn)?;
    rows.into_iter()
        .map(|r| {
            let sealed = match (r.key_fingerprint, r.nonce, r.ciphertext) {
                (Some(key_fingerprint), Some(nonce), Some(ciphertext)) => Some(SealedPayload {
                    key_fingerprint,
                    nonce,
                    ciphertext,
                }),
                _ => None,
            };
            HeaderRecord::from_columns(r.name, r.value, sealed, r.hint)
        })
        .collect()
}

/// The headers as shown: a secret's hint, never its value.
pub(super) fn shown(
    conn: &mut SqliteConnection,
    destination: &str,
) -> Result<Vec<CustomHeader>, StoreError> {
    Ok(records(conn, destination)?
        .iter()
        .map(HeaderRecord::shown)
        .collect())
}

/// The headers for a send: a secret's value opened with `key`.
pub(super) fn opened(
    conn: &mut SqliteConnection,
    key: &PayloadKey,
    destination: &str,
) -> Result<Vec<CustomHeader>, StoreError> {
    records(conn, destination)?
        .iter()
        .map(|r| r.opened(key, destination))
        .collect()
}

/// Replaces the destination's header rows with `records`, in order.
pub(super) fn replace(
    conn: &mut SqliteConnection,
    destination: &str,
    records: &[HeaderRecord],
) -> Result<(), StoreError> {
    diesel::sql_query("DELETE FROM destination_headers WHERE destination_id = ?")
        .bind::<Text, _>(destination)
        .execute(conn)?;
    for (position, record) in records.iter().enumerate() {
        let (value, sealed, hint) = match &record.value {
            StoredHeader::Plain(v) => (Some(v.as_str()), None, None),
            StoredHeader::Sealed { sealed, hint } => (None, Some(sealed), hint.as_deref()),
        };
        diesel::sql_query(
            "INSERT INTO destination_headers (destination_id, name, position, value, \
             key_fingerprint, nonce, ciphertext, hint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind::<Text, _>(destination)
        .bind::<Text, _>(&record.name)
        .bind::<BigInt, _>(i64::try_from(position).unwrap_or(i64::MAX))
        .bind::<Nullable<Text>, _>(value)
        .bind::<Nullable<Binary>, _>(sealed.map(|s| s.key_fingerprint.as_slice()))
        .bind::<Nullable<Binary>, _>(sealed.map(|s| s.nonce.as_slice()))
        .bind::<Nullable<Binary>, _>(sealed.map(|s| s.ciphertext.as_slice()))
        .bind::<Nullable<Text>, _>(hint)
        .execute(conn)?;
    }
    Ok(())
}

/// Writes an imported destination's header rows as they come, and records
/// the keys their sealed values are under, as an imported secret's is: a
/// process without one is refused at start rather than failing each send.
pub(super) fn import(
    conn: &mut SqliteConnection,
    destination: &str,
    records: &[HeaderRecord],
    now_micros: i64,
) -> Result<(), StoreError> {
    replace(conn, destination, records)?;
    for fingerprint in records.iter().filter_map(HeaderRecord::key_fingerprint) {
        diesel::sql_query(
            "INSERT OR IGNORE INTO payload_keys (fingerprint, recorded_at) VALUES (?, ?)",
        )
        .bind::<Binary, _>(fingerprint)
        .bind::<BigInt, _>(now_micros)
        .execute(conn)?;
    }
    Ok(())
}
