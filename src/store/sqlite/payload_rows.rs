//! A payload's row on SQLite: read, written, replaced and deleted. Only
//! sealed bytes; the key never enters the file.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Binary, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::micros;
use crate::payload_crypto::SealedPayload;
use crate::store::contract::StoreError;

#[derive(QueryableByName)]
pub(super) struct PayloadRow {
    #[diesel(sql_type = Text)]
    pub content_type: String,
    #[diesel(sql_type = Binary)]
    key_fingerprint: Vec<u8>,
    #[diesel(sql_type = Binary)]
    nonce: Vec<u8>,
    #[diesel(sql_type = Binary)]
    ciphertext: Vec<u8>,
}

impl PayloadRow {
    pub fn sealed(self) -> (String, SealedPayload) {
        (
            self.content_type,
            SealedPayload {
                key_fingerprint: self.key_fingerprint,
                nonce: self.nonce,
                ciphertext: self.ciphertext,
            },
        )
    }
}

pub(super) fn payload_row(
    conn: &mut SqliteConnection,
    payload_ref: uuid::Uuid,
) -> Result<Option<PayloadRow>, StoreError> {
    let mut rows: Vec<PayloadRow> = diesel::sql_query(
        "SELECT content_type, key_fingerprint, nonce, ciphertext FROM payloads \
         WHERE payload_ref = ?",
    )
    .bind::<Text, _>(payload_ref.to_string())
    .load(conn)?;
    Ok(rows.pop())
}

const INSERT_PAYLOAD: &str = "INSERT INTO payloads (payload_ref, content_type, key_fingerprint, \
     nonce, ciphertext, created_at) VALUES (?, ?, ?, ?, ?, ?)";

/// Writes a new payload under `payload_ref` (one already there is an
/// error).
pub(super) fn insert_payload(
    conn: &mut SqliteConnection,
    payload_ref: uuid::Uuid,
    content_type: &str,
    sealed: &SealedPayload,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    put(conn, INSERT_PAYLOAD, payload_ref, content_type, sealed, now)
}

/// Writes a payload under `payload_ref`, replacing the one there (a
/// reschedule's new payload), or putting it back once erased.
pub(super) fn replace_payload(
    conn: &mut SqliteConnection,
    payload_ref: uuid::Uuid,
    content_type: &str,
    sealed: &SealedPayload,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let sql = format!(
        "{INSERT_PAYLOAD} ON CONFLICT (payload_ref) DO UPDATE SET \
         content_type = excluded.content_type, key_fingerprint = excluded.key_fingerprint, \
         nonce = excluded.nonce, ciphertext = excluded.ciphertext"
    );
    put(conn, &sql, payload_ref, content_type, sealed, now)
}

fn put(
    conn: &mut SqliteConnection,
    sql: &str,
    payload_ref: uuid::Uuid,
    content_type: &str,
    sealed: &SealedPayload,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    diesel::sql_query(sql)
        .bind::<Text, _>(payload_ref.to_string())
        .bind::<Text, _>(content_type)
        .bind::<Binary, _>(&sealed.key_fingerprint)
        .bind::<Binary, _>(&sealed.nonce)
        .bind::<Binary, _>(&sealed.ciphertext)
        .bind::<BigInt, _>(micros(now))
        .execute(conn)?;
    Ok(())
}

/// Deletes a payload's row (an erase): true when it was there.
pub(super) fn delete_payload(
    conn: &mut SqliteConnection,
    payload_ref: uuid::Uuid,
) -> Result<bool, StoreError> {
    Ok(
        diesel::sql_query("DELETE FROM payloads WHERE payload_ref = ?")
            .bind::<Text, _>(payload_ref.to_string())
            .execute(conn)?
            > 0,
    )
}
