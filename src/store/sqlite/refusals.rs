//! The embedded store's record of destinations an address policy refuses
//! (see `store::refusals`).

use diesel::sql_types::{BigInt, Text};
use diesel::RunQueryDsl;

use super::rows::micros;
use super::store::SqliteStore;
use crate::domain::DestinationId;
use crate::store::contract::StoreError;

impl SqliteStore {
    /// See `Destinations::mark_refused`.
    pub(super) async fn record_refusal(
        &self,
        id: DestinationId,
        why: String,
    ) -> Result<(), StoreError> {
        self.run(true, move |conn, ctx| {
            diesel::sql_query(
                "UPDATE destinations SET refused = ?2, refused_at = ?3 WHERE id = ?1",
            )
            .bind::<Text, _>(id.as_str())
            .bind::<Text, _>(why)
            .bind::<BigInt, _>(micros(ctx.now))
            .execute(conn)?;
            Ok(())
        })
        .await
    }
}
