//! Re-sealing under the newest payload key on PostgreSQL (see
//! `store::rules::rekey`): a batch of payloads after a cursor, by `payload_ref`
//! (the primary key, so the whole table is walked once), and the secrets
//! not yet under the newest key, in one short transaction that locks only
//! the rows it rewrites (secret header values with the secrets).

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bytea};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::super::audit;
use super::super::tables::schema::{destination_secrets, payloads};
use crate::payload_crypto::{hex, SealedPayload};
use crate::store::contract::{HeaderRecord, KeyCount, Rekeyed, StoreError, StoredHeader};
use crate::store::postgres::store::PgStore;
use crate::store::rules::audit_entries;
use crate::store::rules::rekey::merge_counts;

/// A row's key fingerprint, nonce and ciphertext.
type Sealed = (Vec<u8>, Vec<u8>, Vec<u8>);

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = Bytea)]
    fingerprint: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Rows sealed under each key.
pub(in crate::store) async fn counts(store: &PgStore) -> Result<Vec<KeyCount>, StoreError> {
    let mut conn = store.conn().await?;
    let pairs = |rows: Vec<Count>| rows.into_iter().map(|c| (c.fingerprint, c.n)).collect();
    let by_payload: Vec<Count> = diesel::sql_query(
        "SELECT key_fingerprint AS fingerprint, count(*) AS n FROM payloads GROUP BY 1",
    )
    .load(&mut conn)
    .await?;
    // Secret header values count as secrets.
    let by_secret: Vec<Count> = diesel::sql_query(
        "SELECT fingerprint, count(*) AS n FROM ( \
             SELECT key_fingerprint AS fingerprint FROM destination_secrets \
             WHERE key_fingerprint IS NOT NULL \
             UNION ALL SELECT key_fingerprint FROM destination_headers \
             WHERE key_fingerprint IS NOT NULL) sealed GROUP BY 1",
    )
    .load(&mut conn)
    .await?;
    Ok(merge_counts(pairs(by_payload), pairs(by_secret)))
}

/// Re-seals up to `limit` payloads after `after`, and up to `limit`
/// secrets, that are not under the newest key.
pub(in crate::store) async fn batch(
    store: &PgStore,
    after: Option<uuid::Uuid>,
    limit: u32,
) -> Result<Rekeyed, StoreError> {
    let key = store.key.clone();
    let newest = key.fingerprint().to_vec();
    let mut conn = store.conn().await?;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let found: Vec<(uuid::Uuid, String, Sealed)> = payloads::table
            .filter(payloads::payload_ref.gt(after.unwrap_or(uuid::Uuid::nil())))
            .filter(payloads::key_fingerprint.ne(&newest))
            .order(payloads::payload_ref)
            .limit(i64::from(limit))
            .select((
                payloads::payload_ref,
                payloads::content_type,
                (
                    payloads::key_fingerprint,
                    payloads::nonce,
                    payloads::ciphertext,
                ),
            ))
            .for_update()
            .load(conn)
            .await?;
        let next = found.last().map(|row| row.0);
        let mut done = Rekeyed {
            payloads: 0,
            secrets: 0,
            next,
        };
        for (payload_ref, content_type, (key_fingerprint, nonce, ciphertext)) in found {
            let old = SealedPayload {
                key_fingerprint,
                nonce,
                ciphertext,
            };
            let new = key.reseal(payload_ref, &content_type, &old)?;
            let row = diesel::update(payloads::table.find(payload_ref));
            // Under a data key only that key is sealed again: the body's
            // bytes (often stored out of line) are not written.
            done.payloads += if new.ciphertext == old.ciphertext {
                row.set((
                    payloads::key_fingerprint.eq(new.key_fingerprint),
                    payloads::nonce.eq(new.nonce),
                ))
                .execute(conn)
                .await?
            } else {
                row.set((
                    payloads::key_fingerprint.eq(new.key_fingerprint),
                    payloads::nonce.eq(new.nonce),
                    payloads::ciphertext.eq(new.ciphertext),
                ))
                .execute(conn)
                .await?
            } as u64;
        }
        let secrets: Vec<(String, String, Sealed)> = destination_secrets::table
            .filter(destination_secrets::key_fingerprint.ne(&newest))
            .order(destination_secrets::id)
            .limit(i64::from(limit))
            .select((
                destination_secrets::id,
                destination_secrets::destination_id,
                (
                    destination_secrets::key_fingerprint.assume_not_null(),
                    destination_secrets::nonce.assume_not_null(),
                    destination_secrets::ciphertext.assume_not_null(),
                ),
            ))
            .for_update()
            .load(conn)
            .await?;
        for (id, destination, (key_fingerprint, nonce, ciphertext)) in secrets {
            let old = SealedPayload {
                key_fingerprint,
                nonce,
                ciphertext,
            };
            let secret =
                key.open_secret(&id, &destination, &old)
                    .map_err(|source| StoreError::Secret {
                        id: id.clone(),
                        destination: destination.clone(),
                        source,
                    })?;
            let new = key.seal_secret(&id, &destination, &secret);
            done.secrets += diesel::update(destination_secrets::table.find(&id))
                .set((
                    destination_secrets::key_fingerprint.eq(Some(new.key_fingerprint)),
                    destination_secrets::nonce.eq(Some(new.nonce)),
                    destination_secrets::ciphertext.eq(Some(new.ciphertext)),
                ))
                .execute(conn)
                .await? as u64;
        }
        done.secrets += headers(conn, &key, &newest, limit).await?;
        Ok(done)
    })
    .await
}

/// Re-seals up to `limit` secret header values not under the newest key,
/// by (destination, name), each row locked and rewritten whole.
async fn headers(
    conn: &mut diesel_async::AsyncPgConnection,
    key: &crate::payload_crypto::PayloadKey,
    newest: &[u8],
    limit: u32,
) -> Result<u64, StoreError> {
    use super::super::tables::schema::destination_headers as h;
    let stale: Vec<(String, String, Sealed, Option<String>)> = h::table
        .filter(h::key_fingerprint.ne(newest))
        .order((h::destination_id, h::name))
        .limit(i64::from(limit))
        .select((
            h::destination_id,
            h::name,
            (
                h::key_fingerprint.assume_not_null(),
                h::nonce.assume_not_null(),
                h::ciphertext.assume_not_null(),
            ),
            h::hint,
        ))
        .for_update()
        .load(conn)
        .await?;
    let mut rewritten = 0;
    for (destination, name, (key_fingerprint, nonce, ciphertext), hint) in stale {
        let sealed = SealedPayload {
            key_fingerprint,
            nonce,
            ciphertext,
        };
        let old = HeaderRecord::from_columns(name, None, Some(sealed), hint)?;
        let StoredHeader::Sealed { sealed: new, .. } = old.resealed(key, &destination)?.value
        else {
            continue;
        };
        rewritten += diesel::update(h::table.find((&destination, &old.name)))
            .set((
                h::key_fingerprint.eq(Some(new.key_fingerprint)),
                h::nonce.eq(Some(new.nonce)),
                h::ciphertext.eq(Some(new.ciphertext)),
            ))
            .execute(conn)
            .await? as u64;
    }
    Ok(rewritten)
}

/// Forgets the recorded keys, other than the newest, that nothing is
/// sealed under any more; returns their fingerprints. Locks the record as
/// the start-up check does, so no process records a key meanwhile.
pub(in crate::store) async fn forget_unused(store: &PgStore) -> Result<Vec<Vec<u8>>, StoreError> {
    #[derive(QueryableByName)]
    struct Forgotten {
        #[diesel(sql_type = Bytea)]
        fingerprint: Vec<u8>,
    }
    let newest = store.key.fingerprint().to_vec();
    let mut conn = store.conn().await?;
    let rows: Vec<Forgotten> = conn
        .transaction::<_, StoreError, _>(async |conn| {
            diesel::sql_query("LOCK TABLE payload_keys IN SHARE ROW EXCLUSIVE MODE")
                .execute(conn)
                .await?;
            let rows = diesel::sql_query(
                "DELETE FROM payload_keys k WHERE k.fingerprint <> $1 \
                 AND NOT EXISTS (SELECT 1 FROM payloads p WHERE p.key_fingerprint = k.fingerprint) \
                 AND NOT EXISTS (SELECT 1 FROM destination_secrets s \
                                 WHERE s.key_fingerprint = k.fingerprint) \
                 AND NOT EXISTS (SELECT 1 FROM destination_headers h \
                                 WHERE h.key_fingerprint = k.fingerprint) \
                 RETURNING k.fingerprint",
            )
            .bind::<Bytea, _>(&newest)
            .load::<Forgotten>(conn)
            .await?;
            let forgotten: Vec<String> = rows.iter().map(|r| hex(&r.fingerprint)).collect();
            let entry = audit_entries::keys_forgotten(&hex(&newest), &forgotten);
            audit::record(store, conn, entry).await?;
            Ok(rows)
        })
        .await?;
    Ok(rows.into_iter().map(|r| r.fingerprint).collect())
}
