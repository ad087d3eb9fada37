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
//! LISTEN, so [`Wakeups::reaches_every_process`] is false there.

use crate::store::postgres::Listener;
use crate::store::{Database, StoreError, Wakeup};

/// Where wake-ups come from: a dedicated connection that LISTENs on both
/// channels, or the embedded store's in-process broadcast.
pub struct Wakeups {
    source: Source,
}

enum Source {
    Listen(Listener),
    InProcess(tokio::sync::broadcast::Receiver<Wakeup>),
}

impl std::fmt::Debug for Wakeups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wakeups")
    }
}

impl Wakeups {
    pub async fn connect(store: &Database) -> Result<Self, StoreError> {
        let source = match store {
            Database::Postgres(pg) => Source::Listen(Listener::connect(pg).await?),
            Database::Sqlite(lite) => Source::InProcess(lite.subscribe()),
        };
        Ok(Self { source })
    }

    /// Whether a change any process makes (a pause) is heard here. Only
    /// then may a process trust what it keeps of a destination.
    pub fn reaches_every_process(&self) -> bool {
        matches!(self.source, Source::Listen(_))
    }

    /// Proves the connection alive with a round trip (`SELECT 1`) that must
    /// answer `within`: a connection the network lost without a word (no
    /// reset, no close) would otherwise wait for notifications forever.
    /// The in-process source is always alive.
    pub async fn ping(&mut self, within: std::time::Duration) -> Result<(), StoreError> {
        match &mut self.source {
            Source::Listen(listener) => listener.ping(within).await,
            Source::InProcess(_) => Ok(()),
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
        }
    }
}
