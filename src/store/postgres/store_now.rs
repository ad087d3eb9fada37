//! The store's now inside a transaction: the pinned clock (tests), or the
//! database's `now()`, so every time a statement writes is the database's.

use chrono::{DateTime, Utc};
use diesel::sql_types::{Nullable, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
}

/// The store's now: the pinned clock, or the database's.
pub(super) async fn now(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
) -> Result<DateTime<Utc>, StoreError> {
    let now: Now = diesel::sql_query("SELECT coalesce($1, now()) AS now")
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .get_result(conn)
        .await?;
    Ok(now.now)
}
