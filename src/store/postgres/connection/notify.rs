//! LISTEN/NOTIFY on PostgreSQL: the channels the statements notify when
//! they commit, and the dedicated connection that listens to them.
//! `remit::store`'s `notify` says what the wake-ups are for.
//!
//! A LISTEN answers OK through any pooler, and through a transaction
//! pooler hears nothing of other sessions; so a listener counts as
//! hearing every process only once it has heard a NOTIFY sent from
//! another connection (one of the pool's) within [`PROBE_WITHIN`].

use std::collections::VecDeque;
use std::time::Duration;

use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::StreamExt;

use crate::domain::{DestinationId, TaskId};
use crate::store::contract::{StoreError, Wakeup};
use crate::store::postgres::connection::connect::PgConnector;

pub(in crate::store::postgres) const DUE_WORK_CHANNEL: &str = "remit_due_work";
pub(in crate::store::postgres) const DESTINATION_CHANNEL: &str = "remit_destination";
/// An operator's change now waits for a task's attempt; the payload is the
/// task's id.
pub(in crate::store::postgres) const TASK_CHANGED_CHANNEL: &str = "remit_task_changed";
/// A listener's proof that it hears other sessions: the payload is a
/// value fresh to the listener.
const PROBE_CHANNEL: &str = "remit_listen_probe";

/// How long a new listener waits to hear its probe.
pub(crate) const PROBE_WITHIN: Duration = Duration::from_secs(2);

/// A connection of its own, outside the pool, that LISTENs on every
/// channel.
pub(crate) struct Listener {
    conn: Box<AsyncPgConnection>,
    /// Wake-ups heard while waiting for the probe, given out first.
    early: VecDeque<Wakeup>,
    /// Whether it heard a NOTIFY another connection sent.
    hears_others: bool,
}

/// What a notification was.
enum Heard {
    Wakeup(Wakeup),
    Probe(String),
    /// A channel or payload this build does not understand.
    Other,
}

impl Listener {
    /// Listens through `connector` (PostgreSQL itself, never a
    /// transaction pooler: `PgStore::listen_connector`), then has
    /// `send_probe` run the probe's NOTIFY from another connection (a
    /// pooled one, taken only once the LISTEN is open and given back
    /// before the wait) and waits for it.
    pub(crate) async fn connect<Sent>(
        connector: &PgConnector,
        send_probe: impl FnOnce(String) -> Sent,
    ) -> Result<Self, StoreError>
    where
        Sent: std::future::Future<Output = Result<(), StoreError>>,
    {
        let mut listener = Self {
            conn: Box::new(listen(connector).await?),
            early: VecDeque::new(),
            hears_others: false,
        };
        let probe = uuid::Uuid::new_v4().simple().to_string();
        send_probe(format!("NOTIFY {PROBE_CHANNEL}, '{probe}'")).await?;
        let waited = tokio::time::timeout(PROBE_WITHIN, async {
            loop {
                match heard(&mut listener.conn).await? {
                    Heard::Probe(payload) if payload == probe => return Ok::<_, StoreError>(()),
                    Heard::Wakeup(wakeup) => listener.early.push_back(wakeup),
                    Heard::Probe(_) | Heard::Other => {}
                }
            }
        })
        .await;
        match waited {
            Ok(Ok(())) => listener.hears_others = true,
            Ok(Err(e)) => return Err(e),
            Err(_) => {}
        }
        Ok(listener)
    }

    /// Whether it heard a NOTIFY sent from another connection: only then
    /// does it hear every process.
    pub(crate) fn hears_others(&self) -> bool {
        self.hears_others
    }

    /// A round trip (`SELECT 1`) that must answer `within`.
    pub(crate) async fn ping(&mut self, within: std::time::Duration) -> Result<(), StoreError> {
        let conn = &mut *self.conn;
        match tokio::time::timeout(within, diesel::sql_query("SELECT 1").execute(conn)).await {
            Ok(answer) => answer.map(drop).map_err(StoreError::Query),
            Err(_) => Err(StoreError::Open(diesel::ConnectionError::BadConnection(
                format!("no answer to a ping within {} ms", within.as_millis()),
            ))),
        }
    }

    /// The next notification this build understands.
    pub(crate) async fn next(&mut self) -> Result<Wakeup, StoreError> {
        if let Some(wakeup) = self.early.pop_front() {
            return Ok(wakeup);
        }
        loop {
            if let Heard::Wakeup(wakeup) = heard(&mut self.conn).await? {
                return Ok(wakeup);
            }
        }
    }
}

async fn listen(connector: &PgConnector) -> Result<AsyncPgConnection, StoreError> {
    let mut conn = connector.establish().await?;
    // All in one round trip: the connection listens to all or to none.
    conn.batch_execute(&format!(
        "LISTEN {DUE_WORK_CHANNEL}; LISTEN {DESTINATION_CHANNEL}; LISTEN {TASK_CHANGED_CHANNEL}; \
         LISTEN {PROBE_CHANNEL}"
    ))
    .await?;
    Ok(conn)
}

/// The next notification, whatever it is.
async fn heard(conn: &mut AsyncPgConnection) -> Result<Heard, StoreError> {
    let mut stream = std::pin::pin!(conn.notifications_stream());
    let Some(notification) = stream.next().await else {
        return Err(StoreError::Query(
            diesel::result::Error::BrokenTransactionManager,
        ));
    };
    let notification = notification?;
    let payload = notification.payload;
    let wakeup = match notification.channel.as_str() {
        PROBE_CHANNEL => return Ok(Heard::Probe(payload)),
        DUE_WORK_CHANNEL => payload.parse().ok().map(Wakeup::DueWork),
        DESTINATION_CHANNEL => DestinationId::new(&payload).ok().map(Wakeup::Destination),
        TASK_CHANGED_CHANNEL => uuid::Uuid::parse_str(&payload)
            .ok()
            .map(|id| Wakeup::TaskChanged(TaskId(id))),
        _ => None,
    };
    Ok(wakeup.map_or(Heard::Other, Heard::Wakeup))
}
