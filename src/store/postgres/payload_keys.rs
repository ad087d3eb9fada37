//! The payload key record on PostgreSQL: `remit::store`'s `payload_keys`
//! says why it is kept.

use diesel::sql_types::{Bytea, Nullable, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::{PgStore, StoreError};

#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Bytea)]
    fingerprint: Vec<u8>,
}

/// Records the key where none is recorded and returns every recorded
/// fingerprint, in one short transaction that first locks the table: two
/// processes starting at once with different keys would otherwise both
/// find it empty and both record theirs. Each statement after the lock
/// reads what the other committed (READ COMMITTED).
pub(in crate::store) async fn record(store: &PgStore) -> Result<Vec<Vec<u8>>, StoreError> {
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
