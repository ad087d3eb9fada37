//! The configured database as a process opens it: the store, checked
//! against this release's schema (and, for a command that seals payloads,
//! against the payload key), and the store its reports read.

use remit::payload_crypto::PayloadKey;
use remit::store::{Database, DatabaseConfig, Keys, ReportReader};

use super::error::AppError;
use crate::config::{Config, PoolerMode};

/// Connects to the configured database (an embedded file is created and
/// migrated on first use) and checks that its schema is this release's.
pub async fn connect(config: &Config, key: PayloadKey) -> Result<Database, AppError> {
    let mut database = DatabaseConfig::new(config.database.url.clone());
    database.pool_size = config.database.pool_size;
    database.allow_newer_schema = config.database.allow_newer_schema;
    database.pooler = config.database.pooler.into();
    database.direct_url = config.database.direct_url.clone();
    Ok(Database::connect(&database, key).await?)
}

/// Where the reports read: the replica `database.read_url` names, through
/// a pool of its own, else `store` itself, through a handle that cannot
/// write.
pub async fn reports(config: &Config, store: &Database) -> Result<ReportReader, AppError> {
    match &config.database.read_url {
        Some(url) => Ok(ReportReader::replica_of(
            store,
            url,
            config.database.read_pool_size,
            config
                .database
                .read_pooler
                .unwrap_or(PoolerMode::None)
                .into(),
        )
        .await
        .map_err(AppError::Replica)?),
        None => Ok(ReportReader::on(store.clone())),
    }
}

/// Connects for a command that seals payloads (`run`, `schedule`): a key
/// other than the one the database's payloads are sealed with is refused
/// here, naming both fingerprints, before anything is sealed under it.
pub async fn connect_to_seal(config: &Config, key: PayloadKey) -> Result<Database, AppError> {
    let store = connect(config, key).await?;
    store.check_payload_key().await?;
    Ok(store)
}
