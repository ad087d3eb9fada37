//! LISTEN/NOTIFY on PostgreSQL: the channels the statements notify when
//! they commit, and the dedicated connection that listens to them.
//! `remit::store`'s `notify` says what the wake-ups are for.

use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::StreamExt;

use super::{PgConnector, StoreError};
use crate::domain::{DestinationId, TaskId};
use crate::store::Wakeup;

pub(super) const DUE_WORK_CHANNEL: &str = "remit_due_work";
pub(super) const DESTINATION_CHANNEL: &str = "remit_destination";
/// An operator's change now waits for a task's attempt; the payload is the
/// task's id.
pub(super) const TASK_CHANGED_CHANNEL: &str = "remit_task_changed";

/// A connection of its own, outside the pool, that LISTENs on every
/// channel.
pub(crate) struct Listener(Box<AsyncPgConnection>);

impl Listener {
    /// Listens through `connector`: PostgreSQL itself, never a
    /// transaction pooler (`PgStore::listen_connector`).
    pub(crate) async fn connect(connector: &PgConnector) -> Result<Self, StoreError> {
        Ok(Self(Box::new(listen(connector).await?)))
    }

    /// A round trip (`SELECT 1`) that must answer `within`.
    pub(crate) async fn ping(&mut self, within: std::time::Duration) -> Result<(), StoreError> {
        let conn = &mut *self.0;
        match tokio::time::timeout(within, diesel::sql_query("SELECT 1").execute(conn)).await {
            Ok(answer) => answer.map(drop).map_err(StoreError::Query),
            Err(_) => Err(StoreError::Open(diesel::ConnectionError::BadConnection(
                format!("no answer to a ping within {} ms", within.as_millis()),
            ))),
        }
    }

    /// The next notification this build understands.
    pub(crate) async fn next(&mut self) -> Result<Wakeup, StoreError> {
        next_notification(&mut self.0).await
    }
}

async fn listen(connector: &PgConnector) -> Result<AsyncPgConnection, StoreError> {
    let mut conn = connector.establish().await?;
    // All in one round trip: the connection listens to all or to none.
    conn.batch_execute(&format!(
        "LISTEN {DUE_WORK_CHANNEL}; LISTEN {DESTINATION_CHANNEL}; LISTEN {TASK_CHANGED_CHANNEL}"
    ))
    .await?;
    Ok(conn)
}

async fn next_notification(conn: &mut AsyncPgConnection) -> Result<Wakeup, StoreError> {
    let mut stream = std::pin::pin!(conn.notifications_stream());
    while let Some(notification) = stream.next().await {
        let notification = notification?;
        let wakeup = match notification.channel.as_str() {
            DUE_WORK_CHANNEL => notification.payload.parse().ok().map(Wakeup::DueWork),
            DESTINATION_CHANNEL => DestinationId::new(&notification.payload)
                .ok()
                .map(Wakeup::Destination),
            TASK_CHANGED_CHANNEL => uuid::Uuid::parse_str(&notification.payload)
                .ok()
                .map(|id| Wakeup::TaskChanged(TaskId(id))),
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
