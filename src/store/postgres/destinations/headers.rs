//! A destination's custom header rows on PostgreSQL: read for display (a
//! secret's hint only) or for a send (opened), and replaced as a whole by
//! a change or an import.

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::tables::schema::destination_headers as h;
use crate::payload_crypto::SealedPayload;
use crate::store::contract::{HeaderRecord, StoreError, StoredHeader};

type Row = (
    String,
    String,
    Option<String>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<String>,
);

/// The header rows of each of `ids`, in order, still sealed.
pub(in crate::store::postgres) async fn records(
    conn: &mut AsyncPgConnection,
    ids: &[&str],
) -> Result<HashMap<String, Vec<HeaderRecord>>, StoreError> {
    let rows: Vec<Row> = h::table
        .filter(h::destination_id.eq_any(ids))
        .order((h::destination_id, h::position))
        .select((
            h::destination_id,
            h::name,
            h::value,
            h::key_fingerprint,
            h::nonce,
            h::ciphertext,
            h::hint,
        ))
        .load(conn)
        .await?;
    let mut found: HashMap<String, Vec<HeaderRecord>> = HashMap::new();
    for (destination, name, value, key_fingerprint, nonce, ciphertext, hint) in rows {
        let sealed = match (key_fingerprint, nonce, ciphertext) {
            (Some(key_fingerprint), Some(nonce), Some(ciphertext)) => Some(SealedPayload {
                key_fingerprint,
                nonce,
                ciphertext,
            }),
            _ => None,
        };
        let record = HeaderRecord::from_columns(name, value, sealed, hint)?;
        found.entry(destination).or_default().push(record);
    }
    Ok(found)
}

/// Replaces the destination's header rows with `records`, in order.
pub(in crate::store::postgres) async fn replace(
    conn: &mut AsyncPgConnection,
    destination: &str,
    records: &[HeaderRecord],
) -> Result<(), StoreError> {
    diesel::delete(h::table.filter(h::destination_id.eq(destination)))
        .execute(conn)
        .await?;
    for (position, record) in records.iter().enumerate() {
        let (value, sealed, hint) = match &record.value {
            StoredHeader::Plain(v) => (Some(v.as_str()), None, None),
            StoredHeader::Sealed { sealed, hint } => (None, Some(sealed), hint.as_deref()),
        };
        diesel::insert_into(h::table)
            .values((
                h::destination_id.eq(destination),
                h::name.eq(&record.name),
                h::position.eq(i32::try_from(position).unwrap_or(i32::MAX)),
                h::value.eq(value),
                h::key_fingerprint.eq(sealed.map(|s| &s.key_fingerprint)),
                h::nonce.eq(sealed.map(|s| &s.nonce)),
                h::ciphertext.eq(sealed.map(|s| &s.ciphertext)),
                h::hint.eq(hint),
            ))
            .execute(conn)
            .await?;
    }
    Ok(())
}

/// Writes an imported destination's header rows as they come, and records
/// the keys their sealed values are under, as an imported secret's is: a
/// process without one is refused at start rather than failing each send.
pub(in crate::store::postgres) async fn import(
    conn: &mut AsyncPgConnection,
    destination: &str,
    records: &[HeaderRecord],
) -> Result<(), StoreError> {
    replace(conn, destination, records).await?;
    for fingerprint in records.iter().filter_map(HeaderRecord::key_fingerprint) {
        diesel::sql_query(
            "INSERT INTO payload_keys (fingerprint, recorded_at) VALUES ($1, now()) \
             ON CONFLICT DO NOTHING",
        )
        .bind::<diesel::sql_types::Bytea, _>(fingerprint)
        .execute(conn)
        .await?;
    }
    Ok(())
}
