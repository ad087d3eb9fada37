//! The record of which payload keys a database's payloads are sealed with
//! (the `payload_keys` table), checked before a process seals anything:
//! a payload sealed under another key would fail, much later, on every
//! process that tries to send it.

use diesel::sql_types::{Bytea, Nullable, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::{Database, PgStore, StoreError};
use crate::payload_crypto::{hex, PayloadKey};

#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Bytea)]
    fingerprint: Vec<u8>,
}

impl Database {
    /// Refuses a key that is not recorded as one this database's payloads
    /// are sealed with; on a database that records none yet, records it.
    pub async fn check_payload_key(&self) -> Result<(), StoreError> {
        let recorded = match self {
            Database::Postgres(pg) => record_postgres(pg).await?,
            Database::Sqlite(lite) => lite.record_payload_key().await?,
        };
        judge(self.payload_key(), &recorded)
    }

    fn payload_key(&self) -> &PayloadKey {
        match self {
            Database::Postgres(pg) => &pg.key,
            Database::Sqlite(lite) => lite.key(),
        }
    }
}

/// The configured key passes when it is among `recorded`.
pub(super) fn judge(key: &PayloadKey, recorded: &[Vec<u8>]) -> Result<(), StoreError> {
    if recorded.iter().any(|f| f.as_slice() == key.fingerprint()) {
        return Ok(());
    }
    Err(StoreError::OtherPayloadKey {
        configured: key.fingerprint_hex(),
        recorded: recorded
            .iter()
            .map(|f| hex(f))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Records the key where none is recorded, in one statement, and returns
/// every recorded fingerprint.
async fn record_postgres(store: &PgStore) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut conn = store.conn().await?;
    let rows: Vec<Recorded> = diesel::sql_query(
        "WITH first AS ( \
             INSERT INTO payload_keys (fingerprint, recorded_at) \
             SELECT $1, coalesce($2, now()) WHERE NOT EXISTS (SELECT 1 FROM payload_keys) \
             ON CONFLICT DO NOTHING RETURNING fingerprint) \
         SELECT fingerprint FROM first UNION SELECT fingerprint FROM payload_keys",
    )
    .bind::<Bytea, _>(store.key.fingerprint())
    .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
    .load(&mut conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.fingerprint).collect())
}
