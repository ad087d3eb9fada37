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
//!
//! On SQLite the same wake-ups travel inside the process only: there is no
//! LISTEN, so [`Wakeups::reaches_every_process`] is false there. Behind a
//! transaction pooler without `database.direct_url` there are none at all
//! (LISTEN through the pooler would answer OK and never hear a thing):
//! claimers poll, and a sender reads the destination's row before each
//! request.

use diesel_async::SimpleAsyncConnection;

use super::handle::Database;
use crate::store::contract::{StoreError, Wakeup};
use crate::store::postgres::Listener;

/// Where wake-ups come from: a dedicated connection that LISTENs on every
/// channel, the embedded store's in-process broadcast, or nowhere.
pub struct Wakeups {
    source: Source,
}

enum Source {
    Listen(Listener),
    InProcess(tokio::sync::broadcast::Receiver<Wakeup>),
    /// Behind a transaction pooler without a direct URL: polling only.
    Polling,
}

impl std::fmt::Debug for Wakeups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wakeups")
    }
}

impl Wakeups {
    pub async fn connect(store: &Database) -> Result<Self, StoreError> {
        let source = match store {
            Database::Postgres(pg) => match pg.listen_connector() {
                Some(connector) => Source::Listen(
                    Listener::connect(connector, |notify| async move {
                        Ok(pg.conn().await?.batch_execute(&notify).await?)
                    })
                    .await?,
                ),
                None => Source::Polling,
            },
            Database::Sqlite(lite) => Source::InProcess(lite.subscribe()),
        };
        Ok(Self { source })
    }

    /// Whether a change any process makes (a pause) is heard here: a
    /// LISTEN that has heard a NOTIFY another connection sent. Only then
    /// may a process trust what it keeps of a destination.
    pub fn reaches_every_process(&self) -> bool {
        matches!(&self.source, Source::Listen(l) if l.hears_others())
    }

    /// Whether it LISTENs but did not hear a NOTIFY another connection
    /// sent (within a couple of seconds): a pooler between it and the
    /// other sessions, so it is not trusted and wake-ups come from polling.
    pub fn deaf(&self) -> bool {
        matches!(&self.source, Source::Listen(l) if !l.hears_others())
    }

    /// Whether nothing is heard at all: a transaction pooler without a
    /// direct URL to LISTEN on, where only polling finds new work.
    pub fn polling_only(&self) -> bool {
        matches!(self.source, Source::Polling)
    }

    /// Proves the connection alive with a round trip (`SELECT 1`) that must
    /// answer `within`: a connection the network lost without a word (no
    /// reset, no close) would otherwise wait for notifications forever.
    /// The in-process source is always alive.
    pub async fn ping(&mut self, within: std::time::Duration) -> Result<(), StoreError> {
        match &mut self.source {
            Source::Listen(listener) => listener.ping(within).await,
            Source::InProcess(_) | Source::Polling => Ok(()),
        }
    }

    /// Waits for the next notification this build understands. An error
    /// means the connection is gone; the caller reconnects or falls back to
    /// polling.
    pub async fn next(&mut self) -> Result<Wakeup, StoreError> {
        match &mut self.source {
            Source::Listen(listener) => listener.next().await,
            Source::InProcess(wakeups) => loop {
                match wakeups.recv().await {
                    Ok(wakeup) => return Ok(wakeup),
                    // Some were missed: polling covers them.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                        return Err(StoreError::Thread("the store was closed".into()))
                    }
                }
            },
            Source::Polling => std::future::pending().await,
        }
    }
}
