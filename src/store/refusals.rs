//! Destinations a runtime's address policy refuses to send to: recorded on
//! the destination's row while its tasks are held, so `remit status` shows
//! them as such whichever process found it, and cleared by the next
//! request that goes out to it.

use diesel::sql_types::{Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;

use super::{Database, PgStore, StoreError};
use crate::domain::DestinationId;

impl Database {
    /// Records why the address policy refuses `id` (`Some`), or that it no
    /// longer does (`None`). The time is kept from the first refusal.
    pub async fn mark_refused(
        &self,
        id: &DestinationId,
        why: Option<String>,
    ) -> Result<(), StoreError> {
        match self {
            Database::Postgres(pg) => mark_postgres(pg, id, why).await,
            Database::Sqlite(lite) => lite.mark_refused(id.clone(), why).await,
        }
    }
}

/// $1 the destination, $2 why (NULL clears), $3 the store's now (NULL: the
/// database's clock). A row already in the wanted state is not rewritten.
const MARK_SQL: &str = "\
UPDATE destinations
SET refused = $2,
    refused_at = CASE WHEN $2 IS NULL THEN NULL ELSE coalesce(refused_at, $3, now()) END
WHERE id = $1 AND refused IS DISTINCT FROM $2";

async fn mark_postgres(
    store: &PgStore,
    id: &DestinationId,
    why: Option<String>,
) -> Result<(), StoreError> {
    let mut conn = store.conn().await?;
    diesel::sql_query(MARK_SQL)
        .bind::<Text, _>(id.as_str())
        .bind::<Nullable<Text>, _>(why)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .execute(&mut conn)
        .await?;
    Ok(())
}
