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

/// Records the key where none is recorded and returns every recorded
/// fingerprint, in one short transaction that first locks the table: two
/// processes starting at once with different keys would otherwise both
/// find it empty and both record theirs. Each statement after the lock
/// reads what the other committed (READ COMMITTED).
async fn record_postgres(store: &PgStore) -> Result<Vec<Vec<u8>>, StoreError> {
    use diesel_async::AsyncConnection as _;

    let mut conn = store.conn().await?;
    let fingerprint = store.key.fingerprint().to_vec();
    let now = store.clock.now_param();
    let rows: Vec<Recorded> = conn
        .transaction::<_, diesel::result::Error, _>(async |conn| {
            diesel::sql_query("LOCK TABLE payload_keys IN SHARE ROW EXCLUSIVE MODE")
                .execute(conn)
                .await?;
            diesel::sql_query(
                "INSERT INTO payload_keys (fingerprint, recorded_at) \
                 SELECT $1, coalesce($2, now()) WHERE NOT EXISTS (SELECT 1 FROM payload_keys)",
            )
            .bind::<Bytea, _>(&fingerprint)
            .bind::<Nullable<Timestamptz>, _>(now)
            .execute(conn)
            .await?;
            diesel::sql_query("SELECT fingerprint FROM payload_keys")
                .load(conn)
                .await
        })
        .await?;
    Ok(rows.into_iter().map(|r| r.fingerprint).collect())
}
