//! `Database`: the store a process runs on, one backend or the other,
//! connected by its URL; every call of the contract is passed to it
//! (`contract.rs`, through `on_store!`).

use super::setup::{migrate, DatabaseConfig};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{Clock, DatabaseUrl, StoreError, StoreStats};
use crate::store::postgres::{PgConfig, PgStore};
use crate::store::sqlite::{self, SqliteStore};

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
pub(super) use on_store;

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

    /// The same database on a pool of `pool_size` for delivery, whose
    /// connections plan each prepared statement once, not at every run
    /// (PostgreSQL); on SQLite the same connection.
    pub async fn with_generic_plans(&self, pool_size: u32) -> Result<Self, StoreError> {
        match self {
            Database::Postgres(pg) => {
                Ok(Database::Postgres(pg.with_generic_plans(pool_size).await?))
            }
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

    /// "PostgreSQL" or "SQLite", for logs and status.
    pub fn kind(&self) -> &'static str {
        match self {
            Database::Postgres(_) => "PostgreSQL",
            Database::Sqlite(_) => "SQLite",
        }
    }
}
