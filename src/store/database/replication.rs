//! The replica the reports may read from (what it replays, and the
//! primary's replication, are `Reports` calls).

use super::handle::Database;
use crate::store::contract::StoreError;
use crate::store::postgres::Pooler;

impl Database {
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
}
