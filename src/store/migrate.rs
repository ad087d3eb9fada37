//! The schema migrations, embedded in the binary.
//!
//! diesel's migration harness is synchronous, and diesel-async's own harness
//! blocks in place, which a current-thread runtime such as actix's forbids.
//! So migrations run on a blocking thread over the sync wrapper.

use diesel::RunQueryDsl as _;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use super::StoreError;

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// An arbitrary constant: the advisory lock that keeps two processes from
/// migrating the same database at once.
const MIGRATION_LOCK: i64 = 0x7265_6d69_745f_6d67;

/// Applies every pending migration and returns the versions it applied.
pub async fn migrate(database_url: &str) -> Result<Vec<String>, StoreError> {
    let url = database_url.to_owned();
    tokio::task::spawn_blocking(move || migrate_blocking(&url))
        .await
        .map_err(|e| StoreError::Migration(format!("migration thread failed: {e}")))?
}

fn migrate_blocking(url: &str) -> Result<Vec<String>, StoreError> {
    let mut conn =
        <AsyncConnectionWrapper<AsyncPgConnection> as diesel::Connection>::establish(url)
            .map_err(StoreError::Connect)?;
    diesel::sql_query(format!("SELECT pg_advisory_lock({MIGRATION_LOCK})")).execute(&mut conn)?;
    let applied = conn
        .run_pending_migrations(MIGRATIONS)
        .map(|versions| versions.iter().map(ToString::to_string).collect())
        .map_err(|e| StoreError::Migration(e.to_string()));
    diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})")).execute(&mut conn)?;
    applied
}
