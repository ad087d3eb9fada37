//! How to reach the database, and its migrations, whichever backend its
//! URL names.

use std::time::Duration as StdDuration;

use crate::store::contract::{DatabaseUrl, LockPatience, LockWait, StoreError};
use crate::store::postgres::{self, PgConfig, Pooler};
use crate::store::sqlite;

/// The URL remit uses when none is configured: a SQLite file in the
/// working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://remit.db";

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    pub url: String,
    /// Connections a PostgreSQL pool opens (SQLite uses one).
    pub pool_size: u32,
    /// How long an operation waits for a free connection, and a new
    /// connection for the server, before failing.
    pub connect_timeout: StdDuration,
    /// Accept a schema with migrations this build does not know (a
    /// rollback onto a newer schema); an older one is always refused.
    pub allow_newer_schema: bool,
    /// What stands between a PostgreSQL `url` and PostgreSQL.
    pub pooler: Pooler,
    /// PostgreSQL itself when `url` is a pooler, for LISTEN.
    pub direct_url: Option<String>,
}

impl DatabaseConfig {
    pub fn new(url: impl Into<String>) -> Self {
        let pg = PgConfig::new(url);
        Self {
            url: pg.url,
            pool_size: pg.pool_size,
            connect_timeout: pg.connect_timeout,
            allow_newer_schema: pg.allow_newer_schema,
            pooler: pg.pooler,
            direct_url: pg.direct_url,
        }
    }
}

/// Applies every pending migration to the database `url` names (creating
/// a SQLite file that does not exist yet) and returns the versions applied.
pub async fn migrate(url: &str) -> Result<Vec<String>, StoreError> {
    migrate_patiently(url, LockPatience::default(), std::sync::Arc::new(|_| {})).await
}

/// `migrate`, trying a PostgreSQL migration whose locks are taken again
/// until `patience` runs out, each wait told to `on_wait` (SQLite's
/// migrations run under its write lock, and wait for nothing else).
pub async fn migrate_patiently(
    url: &str,
    patience: LockPatience,
    on_wait: std::sync::Arc<dyn Fn(&LockWait) + Send + Sync>,
) -> Result<Vec<String>, StoreError> {
    match DatabaseUrl::parse(url)? {
        DatabaseUrl::Postgres(url) => postgres::migrate::migrate(&url, patience, on_wait).await,
        DatabaseUrl::Sqlite(path) => tokio::task::spawn_blocking(move || sqlite::migrate(&path))
            .await
            .map_err(|e| StoreError::Migration(format!("migration thread failed: {e}")))?,
    }
}
