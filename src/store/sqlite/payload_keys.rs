//! The embedded store's record of the payload keys its payloads are
//! sealed with (see `store::contract`).

use diesel::sql_types::{BigInt, Binary};
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::micros;
use super::store::SqliteStore;
use crate::store::contract::may_record;
use crate::store::contract::StoreError;

#[derive(QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Binary)]
    fingerprint: Vec<u8>,
}

/// The fingerprints recorded, without recording anything.
pub(super) fn recorded(
    conn: &mut diesel::sqlite::SqliteConnection,
) -> Result<Vec<Vec<u8>>, StoreError> {
    let rows: Vec<Recorded> =
        diesel::sql_query("SELECT fingerprint FROM payload_keys").load(conn)?;
    Ok(rows.into_iter().map(|r| r.fingerprint).collect())
}

impl SqliteStore {
    /// Records the ring's newest key when the ring holds every key
    /// recorded (on an empty record, at once), under the write lock, and
    /// returns every recorded fingerprint.
    pub(super) async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        self.run(true, |conn, ctx| {
            let rows: Vec<Recorded> =
                diesel::sql_query("SELECT fingerprint FROM payload_keys").load(conn)?;
            let mut recorded: Vec<Vec<u8>> = rows.into_iter().map(|r| r.fingerprint).collect();
            let newest = ctx.key.fingerprint().to_vec();
            if may_record(&ctx.key, &recorded) && !recorded.contains(&newest) {
                diesel::sql_query(
                    "INSERT INTO payload_keys (fingerprint, recorded_at) VALUES (?, ?)",
                )
                .bind::<Binary, _>(&newest)
                .bind::<BigInt, _>(micros(ctx.now))
                .execute(conn)?;
                recorded.push(newest);
            }
            Ok(recorded)
        })
        .await
    }

    /// Seals the signing secrets still in clear, in one write transaction.
    pub(super) async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        self.run(true, |conn, ctx| super::secrets::seal_clear(conn, &ctx.key))
            .await
    }
}
