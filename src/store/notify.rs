//! Wake-ups for claimers: `schedule` notifies a channel with the task's
//! region when it commits, and a claimer that listens polls at once instead
//! of waiting out its idle interval. A missed notification costs only that
//! interval, so nothing depends on delivery.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt;

use super::{PgStore, StoreError};
use crate::domain::Region;

pub(super) const DUE_WORK_CHANNEL: &str = "remit_due_work";

/// A dedicated connection that LISTENs for newly scheduled work.
pub struct DueWorkListener {
    conn: AsyncPgConnection,
}

impl std::fmt::Debug for DueWorkListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DueWorkListener")
    }
}

impl DueWorkListener {
    pub async fn connect(store: &PgStore) -> Result<Self, StoreError> {
        let mut conn = AsyncPgConnection::establish(store.database_url())
            .await
            .map_err(StoreError::Connect)?;
        diesel::sql_query(format!("LISTEN {DUE_WORK_CHANNEL}"))
            .execute(&mut conn)
            .await?;
        Ok(Self { conn })
    }

    /// Waits until work is scheduled for `region`. An error means the
    /// connection is gone; the caller reconnects or falls back to polling.
    pub async fn wait_for(&mut self, region: Region) -> Result<(), StoreError> {
        let mut stream = std::pin::pin!(self.conn.notifications_stream());
        while let Some(notification) = stream.next().await {
            if notification?.payload == region.as_str() {
                return Ok(());
            }
        }
        Err(StoreError::Query(
            diesel::result::Error::BrokenTransactionManager,
        ))
    }
}
