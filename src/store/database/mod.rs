//! `Database`: the store a process runs on, chosen by its URL. The runtime,
//! the API and the CLI hold a `Database` and never name a backend:
//! - `postgres://…` (or `postgresql://…`): [`PgStore`], for production
//!   (several hosts, throughput, point-in-time backups);
//! - `sqlite://PATH`: [`SqliteStore`], one file, nothing to install.
//!
//! # Layout
//! - `contract`: every trait of the contract on `Database`, each call
//!   passed to the backend in one line (`on_store!`);
//! - `audit`: who a handle acts as ([`Database::acting_as`]);
//! - `report_reader`: [`ReportReader`], the handle the reports read
//!   through (a replica's, or the primary's), which cannot write;
//! - `notify`: [`Wakeups`], the wake-ups a process hears (LISTEN/NOTIFY on
//!   PostgreSQL, the in-process broadcast on SQLite);
//! - `sandbox`: [`Sandbox`], a throwaway database of remit's own (a SQLite
//!   file in a temporary directory, or a schema inside a PostgreSQL);
//! - `replication`: the database's replication as `remit status` shows
//!   it.

mod notify;
mod sandbox;

use std::time::Duration as StdDuration;

pub use notify::Wakeups;
pub use report_reader::ReportReader;
pub use sandbox::{create_schema, drop_schema, Sandbox};

use super::postgres;
use super::sqlite::{self, SqliteStore};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{Clock, DatabaseUrl, LockPatience, LockWait, StoreError, StoreStats};
use crate::store::postgres::{PgConfig, PgStore, Pooler};

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

/// The store a process runs on. Cheap to clone.
#[derive(Debug, Clone)]
pub enum Database {
    Postgres(PgStore),
    Sqlite(SqliteStore),
}

impl From<PgStore> for Database {
    fn from(store: PgStore) -> Self {
        Database::Postgres(store)
    }
}

impl From<SqliteStore> for Database {
    fn from(store: SqliteStore) -> Self {
        Database::Sqlite(store)
    }
}

/// Calls the same method on whichever store this is.
macro_rules! on_store {
    ($self:expr, $store:ident => $call:expr) => {
        match $self {
            Database::Postgres($store) => $call,
            Database::Sqlite($store) => $call,
        }
    };
}

// After the macro, which they use.
mod audit;
mod contract;
mod replication;
mod report_reader;

impl Database {
    /// Connects to the database the URL names, checks that it answers and
    /// that its schema is this build's (or, with `allow_newer_schema`,
    /// newer). A SQLite file is created and migrated if it needs to be;
    /// PostgreSQL is migrated only by [`migrate`] (`remit migrate`).
    pub async fn connect(config: &DatabaseConfig, key: PayloadKey) -> Result<Self, StoreError> {
        match DatabaseUrl::parse(&config.url)? {
            DatabaseUrl::Postgres(url) => {
                let pg = PgConfig {
                    url,
                    pool_size: config.pool_size,
                    connect_timeout: config.connect_timeout,
                    allow_newer_schema: config.allow_newer_schema,
                    pooler: config.pooler,
                    direct_url: config.direct_url.clone(),
                };
                Ok(Database::Postgres(PgStore::connect(&pg, key).await?))
            }
            DatabaseUrl::Sqlite(path) => {
                // The embedded file sets itself up: created and migrated on
                // first use, under its write lock. Only a newer schema can
                // be left to refuse.
                migrate(&config.url).await?;
                let allow_newer = config.allow_newer_schema;
                let checked = path.clone();
                tokio::task::spawn_blocking(move || sqlite::check_schema(&checked, allow_newer))
                    .await
                    .map_err(|e| StoreError::Thread(format!("schema check failed: {e}")))??;
                Ok(Database::Sqlite(SqliteStore::open(&path, key).await?))
            }
        }
    }

    /// The same database for one part of a process (the API), so it cannot
    /// take the connections another (delivery) needs: a pool of its own on
    /// PostgreSQL; on SQLite, whose writes serialize anyway, the same
    /// connection.
    pub async fn with_own_pool(&self, pool_size: u32) -> Result<Self, StoreError> {
        match self {
            Database::Postgres(pg) => Ok(Database::Postgres(pg.with_own_pool(pool_size).await?)),
            Database::Sqlite(lite) => Ok(Database::Sqlite(lite.clone())),
        }
    }

    /// The thresholds that disable a failing destination without its own.
    pub fn with_disable_rule(self, rule: crate::policy::DisableRule) -> Self {
        match self {
            Database::Postgres(pg) => Database::Postgres(pg.with_disable_rule(rule)),
            Database::Sqlite(lite) => Database::Sqlite(lite.with_disable_rule(rule)),
        }
    }

    /// Replaces the clock (tests pin it).
    pub fn with_clock(self, clock: Clock) -> Self {
        match self {
            Database::Postgres(pg) => Database::Postgres(pg.with_clock(clock)),
            Database::Sqlite(lite) => Database::Sqlite(lite.with_clock(clock)),
        }
    }

    pub fn clock(&self) -> &Clock {
        on_store!(self, s => s.clock())
    }

    pub fn stats(&self) -> &StoreStats {
        on_store!(self, s => s.stats())
    }

    /// What connecting found worth a warning, for the process to log.
    pub fn warnings(&self) -> &[String] {
        match self {
            Database::Postgres(pg) => pg.warnings(),
            Database::Sqlite(_) => &[],
        }
    }

    /// "PostgreSQL" or "SQLite", for logs and status.
    pub fn kind(&self) -> &'static str {
        match self {
            Database::Postgres(_) => "PostgreSQL",
            Database::Sqlite(_) => "SQLite",
        }
    }
}
