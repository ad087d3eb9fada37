//! Re-sealing under the newest payload key on SQLite (see
//! `store::rules::rekey`), each batch one write transaction (secret
//! header values with the secrets).

use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel::{QueryableByName, RunQueryDsl};

use super::audit;
use super::store::SqliteStore;
use crate::payload_crypto::{hex, PayloadKey, SealedPayload};
use crate::store::contract::StoreError;
use crate::store::contract::{HeaderRecord, KeyCount, Rekeyed, StoredHeader};
use crate::store::rules::audit_entries;
use crate::store::rules::rekey::merge_counts;

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = Binary)]
    fingerprint: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Sealed {
    /// A payload's reference, or a secret's id.
    #[diesel(sql_type = Text)]
    id: String,
    /// A payload's content type, or a secret's destination.
    #[diesel(sql_type = Text)]
    bound_to: String,
    #[diesel(sql_type = Binary)]
    key_fingerprint: Vec<u8>,
    #[diesel(sql_type = Binary)]
    nonce: Vec<u8>,
    #[diesel(sql_type = Binary)]
    ciphertext: Vec<u8>,
}

impl Sealed {
    fn sealed(&self) -> SealedPayload {
        SealedPayload {
            key_fingerprint: self.key_fingerprint.clone(),
            nonce: self.nonce.clone(),
            ciphertext: self.ciphertext.clone(),
        }
    }
}

impl SqliteStore {
    /// Rows sealed under each key.
    pub(super) async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        self.run(false, |conn, _| {
            let pairs = |rows: Vec<Count>| rows.into_iter().map(|c| (c.fingerprint, c.n)).collect();
            let by_payload: Vec<Count> = diesel::sql_query(
                "SELECT key_fingerprint AS fingerprint, count(*) AS n FROM payloads GROUP BY 1",
            )
            .load(conn)?;
            // Secret header values count as secrets.
            let by_secret: Vec<Count> = diesel::sql_query(
                "SELECT fingerprint, count(*) AS n FROM ( \
                     SELECT key_fingerprint AS fingerprint FROM destination_secrets \
                     WHERE key_fingerprint IS NOT NULL \
                     UNION ALL SELECT key_fingerprint FROM destination_headers \
                     WHERE key_fingerprint IS NOT NULL) GROUP BY 1",
            )
            .load(conn)?;
            Ok(merge_counts(pairs(by_payload), pairs(by_secret)))
        })
        .await
    }

    /// Re-seals up to `limit` payloads after `after`, and up to `limit`
    /// secrets, that are not under the newest key.
    pub(super) async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        self.run(true, move |conn, ctx| {
            let key = &ctx.key;
            let newest = key.fingerprint();
            // Payload refs are stored as hyphenated lowercase text, which
            // sorts as the UUIDs do.
            let found: Vec<Sealed> = diesel::sql_query(
                "SELECT payload_ref AS id, content_type AS bound_to, key_fingerprint, nonce, \
                 ciphertext FROM payloads WHERE payload_ref > ? AND key_fingerprint <> ? \
                 ORDER BY payload_ref LIMIT ?",
            )
            .bind::<Text, _>(after.map_or(String::new(), |r| r.to_string()))
            .bind::<Binary, _>(newest)
            .bind::<BigInt, _>(i64::from(limit))
            .load(conn)?;
            let mut done = Rekeyed {
                payloads: 0,
                secrets: 0,
                next: None,
            };
            for row in found {
                let payload_ref =
                    uuid::Uuid::parse_str(&row.id).map_err(|e| StoreError::Corrupt {
                        column: "payloads.payload_ref",
                        reason: e.to_string(),
                    })?;
                let new = key.reseal(payload_ref, &row.bound_to, &row.sealed())?;
                done.payloads += rewrite(conn, "payloads", "payload_ref", &row.id, &new)?;
                done.next = Some(payload_ref);
            }
            let secrets: Vec<Sealed> = diesel::sql_query(
                "SELECT id, destination_id AS bound_to, key_fingerprint, nonce, ciphertext \
                 FROM destination_secrets WHERE key_fingerprint IS NOT NULL \
                 AND key_fingerprint <> ? ORDER BY id LIMIT ?",
            )
            .bind::<Binary, _>(newest)
            .bind::<BigInt, _>(i64::from(limit))
            .load(conn)?;
            for row in secrets {
                let secret = key
                    .open_secret(&row.id, &row.bound_to, &row.sealed())
                    .map_err(|source| StoreError::Secret {
                        id: row.id.clone(),
                        destination: row.bound_to.clone(),
                        source,
                    })?;
                let new = key.seal_secret(&row.id, &row.bound_to, &secret);
                done.secrets += rewrite(conn, "destination_secrets", "id", &row.id, &new)?;
            }
            done.secrets += rekey_headers(conn, key, newest, limit)?;
            Ok(done)
        })
        .await
    }

    /// Forgets the recorded keys, other than the newest, that nothing is
    /// sealed under any more; returns their fingerprints.
    pub(super) async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        self.run(true, |conn, ctx| {
            #[derive(QueryableByName)]
            struct Forgotten {
                #[diesel(sql_type = Binary)]
                fingerprint: Vec<u8>,
            }
            let rows: Vec<Forgotten> = diesel::sql_query(
                "DELETE FROM payload_keys WHERE fingerprint <> ? \
                 AND NOT EXISTS (SELECT 1 FROM payloads p \
                                 WHERE p.key_fingerprint = payload_keys.fingerprint) \
                 AND NOT EXISTS (SELECT 1 FROM destination_secrets s \
                                 WHERE s.key_fingerprint = payload_keys.fingerprint) \
                 AND NOT EXISTS (SELECT 1 FROM destination_headers h \
                                 WHERE h.key_fingerprint = payload_keys.fingerprint) \
                 RETURNING fingerprint",
            )
            .bind::<Binary, _>(ctx.key.fingerprint())
            .load(conn)?;
            let forgotten: Vec<String> = rows.iter().map(|r| hex(&r.fingerprint)).collect();
            let entry = audit_entries::keys_forgotten(&hex(ctx.key.fingerprint()), &forgotten);
            audit::record(conn, ctx, entry)?;
            Ok(rows.into_iter().map(|r| r.fingerprint).collect())
        })
        .await
    }
}

#[derive(QueryableByName)]
struct SealedHeader {
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Binary)]
    key_fingerprint: Vec<u8>,
    #[diesel(sql_type = Binary)]
    nonce: Vec<u8>,
    #[diesel(sql_type = Binary)]
    ciphertext: Vec<u8>,
    #[diesel(sql_type = Nullable<Text>)]
    hint: Option<String>,
}

/// Re-seals up to `limit` secret header values not under the newest key,
/// by (destination, name).
fn rekey_headers(
    conn: &mut diesel::sqlite::SqliteConnection,
    key: &PayloadKey,
    newest: &[u8],
    limit: u32,
) -> Result<u64, StoreError> {
    let stale: Vec<SealedHeader> = diesel::sql_query(
        "SELECT destination_id, name, key_fingerprint, nonce, ciphertext, hint \
         FROM destination_headers WHERE key_fingerprint IS NOT NULL AND key_fingerprint <> ? \
         ORDER BY destination_id, name LIMIT ?",
    )
    .bind::<Binary, _>(newest)
    .bind::<BigInt, _>(i64::from(limit))
    .load(conn)?;
    let mut rewritten = 0;
    for row in stale {
        let sealed = SealedPayload {
            key_fingerprint: row.key_fingerprint,
            nonce: row.nonce,
            ciphertext: row.ciphertext,
        };
        let old = HeaderRecord::from_columns(row.name, None, Some(sealed), row.hint)?;
        let StoredHeader::Sealed { sealed: new, .. } =
            old.resealed(key, &row.destination_id)?.value
        else {
            continue;
        };
        rewritten += diesel::sql_query(
            "UPDATE destination_headers SET key_fingerprint = ?, nonce = ?, ciphertext = ? \
             WHERE destination_id = ? AND name = ?",
        )
        .bind::<Binary, _>(&new.key_fingerprint)
        .bind::<Binary, _>(&new.nonce)
        .bind::<Binary, _>(&new.ciphertext)
        .bind::<Text, _>(&row.destination_id)
        .bind::<Text, _>(&old.name)
        .execute(conn)? as u64;
    }
    Ok(rewritten)
}

/// Rewrites one row's sealed columns; `table` and `id_column` are this
/// file's own constants, never input.
fn rewrite(
    conn: &mut diesel::sqlite::SqliteConnection,
    table: &str,
    id_column: &str,
    id: &str,
    new: &SealedPayload,
) -> Result<u64, StoreError> {
    Ok(diesel::sql_query(format!(
        "UPDATE {table} SET key_fingerprint = ?, nonce = ?, ciphertext = ? WHERE {id_column} = ?"
    ))
    .bind::<Binary, _>(&new.key_fingerprint)
    .bind::<Binary, _>(&new.nonce)
    .bind::<Binary, _>(&new.ciphertext)
    .bind::<Text, _>(id)
    .execute(conn)? as u64)
}
