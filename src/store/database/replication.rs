//! The database's replication, as `remit status` shows it, and the
//! replica the reports may read from.

use super::Database;
use crate::store::{Pooler, ReadSource, Replication, StoreError};

impl Database {
    /// The server's replication: whether a commit waits for a standby.
    /// `None` on SQLite, which has no standby.
    pub async fn replication(&self) -> Result<Option<Replication>, StoreError> {
        match self {
            Database::Postgres(store) => store.replication().await.map(Some),
            Database::Sqlite(_) => Ok(None),
        }
    }

    /// The same store reading from `url` (a replica, behind `pooler`)
    /// through a pool of its own, for the reports; a SQLite store has no
    /// replica and answers itself.
    pub async fn reading_from(
        &self,
        url: &str,
        pool_size: u32,
        pooler: Pooler,
    ) -> Result<Database, StoreError> {
        match self {
            Database::Postgres(store) => Ok(Database::Postgres(
                store.reading_from(url, pool_size, pooler).await?,
            )),
            Database::Sqlite(_) => Ok(self.clone()),
        }
    }

    /// Whether this handle's server is a replica and how far behind it
    /// is; `None` on SQLite.
    pub async fn read_source(&self) -> Result<Option<ReadSource>, StoreError> {
        match self {
            Database::Postgres(store) => store.read_source().await.map(Some),
            Database::Sqlite(_) => Ok(None),
        }
    }
}
