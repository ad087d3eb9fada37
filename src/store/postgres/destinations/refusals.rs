//! Destinations a runtime's address policy refuses to send to: recorded on
//! the destination's row while its tasks are held, so `remit status` shows
//! them as such whichever process found it. A runtime records it again at
//! every hold, so the record's time is the last refusal; `remit status`
//! lists only recent ones, and a destination no process refuses any more
//! drops off by itself.

use diesel::sql_types::{Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;

use crate::domain::DestinationId;
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

/// $1 the destination, $2 why, $3 the store's now (NULL: the database's
/// clock).
const MARK_SQL: &str = "\
UPDATE destinations SET refused = $2, refused_at = coalesce($3, now()) WHERE id = $1";

/// Records why the address policy refuses `id`, now.
pub(in crate::store) async fn mark_refused(
    store: &PgStore,
    id: &DestinationId,
    why: String,
) -> Result<(), StoreError> {
    let mut conn = store.conn().await?;
    diesel::sql_query(MARK_SQL)
        .bind::<Text, _>(id.as_str())
        .bind::<Text, _>(why)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .execute(&mut conn)
        .await?;
    Ok(())
}
