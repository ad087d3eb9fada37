//! The embedded store's record of the payload keys its payloads are
//! sealed with (see `store::payload_keys`).

use diesel::sql_types::{BigInt, Binary};
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::micros;
use super::{SqliteStore, StoreError};

#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Binary)]
    fingerprint: Vec<u8>,
}

impl SqliteStore {
    /// Records the key where none is recorded, under the write lock, and
    /// returns every recorded fingerprint.
    pub(crate) async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        self.run(true, |conn, ctx| {
            diesel::sql_query(
                "INSERT INTO payload_keys (fingerprint, recorded_at) \
                 SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM payload_keys)",
            )
            .bind::<Binary, _>(ctx.key.fingerprint())
            .bind::<BigInt, _>(micros(ctx.now))
            .execute(conn)?;
            let rows: Vec<Recorded> =
                diesel::sql_query("SELECT fingerprint FROM payload_keys").load(conn)?;
            Ok(rows.into_iter().map(|r| r.fingerprint).collect())
        })
        .await
    }

    /// Seals the signing secrets still in clear, in one write transaction.
    pub(crate) async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        self.run(true, |conn, ctx| super::secrets::seal_clear(conn, &ctx.key))
            .await
    }
}
