//! The database's replication, as `remit status` shows it.

use super::Database;
use crate::store::{Replication, StoreError};

impl Database {
    /// The server's replication: whether a commit waits for a standby.
    /// `None` on SQLite, which has no standby.
    pub async fn replication(&self) -> Result<Option<Replication>, StoreError> {
        match self {
            Database::Postgres(store) => store.replication().await.map(Some),
            Database::Sqlite(_) => Ok(None),
        }
    }
}
