//! Wake-ups for a region's runtime over LISTEN/NOTIFY:
//! - `schedule` notifies the due-work channel with the task's region when
//!   it commits, and a claimer that listens polls at once instead of
//!   waiting out its idle interval;
//! - a destination pause notifies the destination channel with the
//!   destination's id when it commits, so every process holds that
//!   destination's queued and about-to-start requests.
//!
//! A missed notification costs only latency: claimers also poll, and a
//! sender reads the destination's row right before each request.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt;

use super::{PgStore, StoreError};
use crate::domain::{DestinationId, Region};

pub(super) const DUE_WORK_CHANNEL: &str = "remit_due_work";
pub(super) const DESTINATION_CHANNEL: &str = "remit_destination";

/// What a notification said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wakeup {
    /// Work was scheduled for this region.
    DueWork(Region),
    /// This destination changed (it was paused).
    Destination(DestinationId),
}

/// A dedicated connection that LISTENs on both channels.
pub struct Wakeups {
    conn: AsyncPgConnection,
}

impl std::fmt::Debug for Wakeups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wakeups")
    }
}

impl Wakeups {
    pub async fn connect(store: &PgStore) -> Result<Self, StoreError> {
        let mut conn = AsyncPgConnection::establish(store.database_url())
            .await
            .map_err(StoreError::Connect)?;
        for channel in [DUE_WORK_CHANNEL, DESTINATION_CHANNEL] {
            diesel::sql_query(format!("LISTEN {channel}"))
                .execute(&mut conn)
                .await?;
        }
        Ok(Self { conn })
    }

    /// Waits for the next notification this build understands. An error
    /// means the connection is gone; the caller reconnects or falls back to
    /// polling.
    pub async fn next(&mut self) -> Result<Wakeup, StoreError> {
        let mut stream = std::pin::pin!(self.conn.notifications_stream());
        while let Some(notification) = stream.next().await {
            let notification = notification?;
            let wakeup = match notification.channel.as_str() {
                DUE_WORK_CHANNEL => notification.payload.parse().ok().map(Wakeup::DueWork),
                DESTINATION_CHANNEL => DestinationId::new(&notification.payload)
                    .ok()
                    .map(Wakeup::Destination),
                _ => None,
            };
            if let Some(wakeup) = wakeup {
                return Ok(wakeup);
            }
        }
        Err(StoreError::Query(
            diesel::result::Error::BrokenTransactionManager,
        ))
    }
}
