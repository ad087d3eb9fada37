//! The payload key record on PostgreSQL: `remit::store`'s `payload_keys`
//! says why it is kept.

use diesel::sql_types::{Bytea, Nullable, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use crate::store::contract::{may_record, StoreError};
use crate::store::postgres::store::PgStore;

#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Bytea)]
    fingerprint: Vec<u8>,
}

/// The fingerprints recorded, without recording anything.
pub(in crate::store) async fn recorded(
    conn: &mut diesel_async::AsyncPgConnection,
) -> Result<Vec<Vec<u8>>, StoreError> {
    let recorded: Vec<Recorded> = diesel::sql_query("SELECT fingerprint FROM payload_keys")
        .load(conn)
        .await?;
    Ok(recorded.into_iter().map(|r| r.fingerprint).collect())
}

/// Records the ring's newest key when the ring holds every key recorded
/// (on an empty record, at once) and returns the recorded fingerprints, in
/// one short transaction that first locks the table: two processes
/// starting at once with different keys would otherwise both find it empty
/// and both record theirs. Each statement after the lock reads what the
/// other committed (READ COMMITTED).
pub(in crate::store) async fn record(store: &PgStore) -> Result<Vec<Vec<u8>>, StoreError> {
    use diesel_async::AsyncConnection as _;

    let mut conn = store.conn().await?;
    let key = store.key.clone();
    let now = store.clock.now_param();
    let rows: Vec<Vec<u8>> = conn
        .transaction::<_, diesel::result::Error, _>(async |conn| {
            diesel::sql_query("LOCK TABLE payload_keys IN SHARE ROW EXCLUSIVE MODE")
                .execute(conn)
                .await?;
            let recorded: Vec<Recorded> = diesel::sql_query("SELECT fingerprint FROM payload_keys")
                .load(conn)
                .await?;
            let mut recorded: Vec<Vec<u8>> = recorded.into_iter().map(|r| r.fingerprint).collect();
            let newest = key.fingerprint().to_vec();
            if may_record(&key, &recorded) && !recorded.contains(&newest) {
                diesel::sql_query(
                    "INSERT INTO payload_keys (fingerprint, recorded_at) \
                     VALUES ($1, coalesce($2, now()))",
                )
                .bind::<Bytea, _>(&newest)
                .bind::<Nullable<Timestamptz>, _>(now)
                .execute(conn)
                .await?;
                recorded.push(newest);
            }
            Ok(recorded)
        })
        .await?;
    Ok(rows)
}
