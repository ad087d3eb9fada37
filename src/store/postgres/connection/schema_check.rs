//! Whether a PostgreSQL database's schema is this build's: the migrations
//! it has applied, read from diesel's table, against the binary's
//! (`remit::store`'s `schema_version` compares them).

use diesel::sql_types::{Bool, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::store::contract::StoreError;
use crate::store::rules::schema_version::compare;

#[derive(QueryableByName)]
struct Present {
    #[diesel(sql_type = Bool)]
    present: bool,
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = Text)]
    version: String,
}

/// Checks a PostgreSQL connection's schema (the one its search_path
/// finds first) against the binary's migrations.
pub(in crate::store::postgres) async fn check(
    conn: &mut AsyncPgConnection,
    embedded: &[String],
    allow_newer: bool,
) -> Result<(), StoreError> {
    let present = diesel::sql_query(
        "SELECT to_regclass('__diesel_schema_migrations') IS NOT NULL AS present",
    )
    .get_result::<Present>(conn)
    .await?
    .present;
    let applied: Vec<String> = if present {
        diesel::sql_query("SELECT version FROM __diesel_schema_migrations")
            .load::<Version>(conn)
            .await?
            .into_iter()
            .map(|v| v.version)
            .collect()
    } else {
        Vec::new()
    };
    compare(&applied, embedded, allow_newer).map_err(StoreError::Schema)
}
