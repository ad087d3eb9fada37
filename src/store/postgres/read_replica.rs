//! The store the reports read: the same key, clock and counters on a
//! replica (`database.read_url`), through a pool of its own.

use std::time::Duration as StdDuration;

use super::connection::schema_check;
use super::store::{open_pool, PgStore};
use crate::store::contract::{SchemaMismatch, StoreError};
use crate::store::postgres::connection::connect::PgConnector;
use crate::store::postgres::connection::pooler::Pooler;

/// How long a process starting just after `remit migrate` waits for its
/// replica (`database.read_url`) to replay the migrations, before it is
/// refused as older than this build: replay takes milliseconds when the
/// replica keeps up, and much longer means it does not.
const REPLICA_SCHEMA_WAIT: StdDuration = StdDuration::from_secs(10);
const REPLICA_SCHEMA_POLL: StdDuration = StdDuration::from_millis(100);

impl PgStore {
    /// The same key, clock and counters reading from another server (a
    /// replica, `database.read_url`) through a pool of its own of
    /// `pool_size` connections: for the reports, which only read. Its
    /// schema is checked as the primary's is, a newer one accepted (a
    /// replica is never ahead of its primary). A replica that has not yet
    /// replayed the newest migrations (a process started just after
    /// `remit migrate`) is waited for, up to `REPLICA_SCHEMA_WAIT`.
    pub async fn reading_from(
        &self,
        url: &str,
        pool_size: u32,
        pooler: Pooler,
    ) -> Result<Self, StoreError> {
        let connector = PgConnector::behind(url, self.connect_timeout, pooler)?.for_store();
        let mut first = connector.establish().await?;
        let embedded = super::connection::migrate::embedded_versions()?;
        let started = std::time::Instant::now();
        let mut waited = false;
        loop {
            match schema_check::check(&mut first, &embedded, true).await {
                // A new database's replica may not have the schema at all.
                Err(StoreError::Schema(SchemaMismatch::Older { .. } | SchemaMismatch::Empty))
                    if started.elapsed() < REPLICA_SCHEMA_WAIT =>
                {
                    waited = true;
                    tokio::time::sleep(REPLICA_SCHEMA_POLL).await;
                }
                checked => break checked?,
            }
        }
        // A connection opened before the schema was there knows none of its
        // types (behind a transaction pooler, it warms them up at connect):
        // the pool starts with one opened now.
        if waited {
            first = connector.establish().await?;
        }
        Ok(Self {
            pool: open_pool(&connector, pool_size, self.connect_timeout, first).await?,
            connector,
            ..self.clone()
        })
    }
}
