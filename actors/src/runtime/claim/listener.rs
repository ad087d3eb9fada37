//! The region's listener: one LISTEN connection for the life of the
//! runtime, apart from the Claimer's restarts. Scheduled work wakes the
//! claimer; a destination pause goes to the supervisor; an operator's
//! change to a task is noted for the delivery that may hold it. A lost connection
//! is re-established with backoff; meanwhile polling alone is correct, only
//! slower to react (a sender still reads the destination's row right before
//! each request).
//!
//! A connection can also die without a word (a network that drops packets
//! sends no reset): the listener pings it every [`PING_EVERY`] and gives it
//! up when an answer takes longer than [`PING_WITHIN`], so a dead listener
//! is noticed within seconds. What the process keeps of destinations is
//! trusted only while a ping proved the listener alive a moment ago
//! (`Targets`).
//!
//! Behind a transaction pooler without `database.direct_url` there is no
//! LISTEN at all: the listener says so once and the runtime polls.

use std::time::Duration;

use actix::prelude::*;
use remit::store::{Wakeup, Wakeups};
use slog::warn;

use super::super::shared::messages::{DestinationChanged, Poll};
use super::super::shared::targets::Targets;
use super::super::shared::Shared;

/// How often the LISTEN connection is asked to prove itself alive.
pub const PING_EVERY: Duration = Duration::from_secs(2);
/// How long a ping may take before the connection is given up.
pub const PING_WITHIN: Duration = Duration::from_secs(2);
/// How long connecting and subscribing may take. A server that stops
/// answering halfway through would otherwise hold the listener forever,
/// before its pings start.
pub const CONNECT_WITHIN: Duration = Duration::from_secs(5);

/// What woke the listener.
enum Event {
    Wakeup(Result<Wakeup, remit::store::StoreError>),
    Ping,
}

/// Starts listening in a task of its own on the current arbiter. It runs
/// until the returned handle is aborted (or dropped with the runtime).
pub fn spawn(
    shared: &Shared,
    claimer: actix::WeakRecipient<Poll>,
    supervisor: Recipient<DestinationChanged>,
) -> actix_rt::task::JoinHandle<()> {
    let store = shared.store.clone();
    let region = shared.region;
    let log = shared.log.clone();
    let targets = shared.targets.clone();
    let changed = shared.changed.clone();
    let keep = shared.lease();
    // Weak: the listener must not keep a claimer the runtime let go of
    // (actix restarts a supervised actor while its address is held).
    let poll = move || {
        if let Some(claimer) = claimer.upgrade() {
            claimer.do_send(Poll);
        }
    };
    actix_rt::spawn(async move {
        // However this future ends (a lost connection, shutdown), what is
        // kept of destinations is no longer trusted.
        let _listening = Listening(targets.clone());
        let mut wait = Duration::from_millis(500);
        loop {
            match tokio::time::timeout(CONNECT_WITHIN, Wakeups::connect(&store)).await {
                Ok(Ok(mut wakeups)) => {
                    wait = Duration::from_millis(500);
                    // Kept destinations are trusted only when every
                    // process's pauses are heard here.
                    let every_process = wakeups.reaches_every_process();
                    targets.set_listening(every_process);
                    if wakeups.deaf() {
                        warn!(
                            log,
                            "LISTEN did not hear a NOTIFY sent from another connection within \
                             2 s: a pooler stands between it and the other sessions, so what \
                             this process keeps of destinations is not trusted (each send reads \
                             the row); set database.direct_url to PostgreSQL itself"
                        );
                    }
                    if wakeups.polling_only() {
                        warn!(
                            log,
                            "LISTEN cannot go through a transaction pooler: wake-ups come \
                                    from polling (claim.idle_poll_ms); set database.direct_url \
                                    to PostgreSQL itself for prompt wake-ups"
                        );
                    }
                    // Anything missed while disconnected.
                    poll();
                    let mut pings = actix_rt::time::interval(PING_EVERY);
                    pings.tick().await;
                    loop {
                        // Both are cancel-safe: a notification not taken
                        // now is taken next time.
                        let event = tokio::select! {
                            wakeup = wakeups.next() => Event::Wakeup(wakeup),
                            _ = pings.tick() => Event::Ping,
                        };
                        match event {
                            Event::Wakeup(Ok(Wakeup::DueWork(r))) if r == region => poll(),
                            Event::Wakeup(Ok(Wakeup::DueWork(_))) => {}
                            Event::Wakeup(Ok(Wakeup::Destination(id))) => {
                                // The next send reads the row, pause
                                // included, until the supervisor holds it.
                                targets.forget(&id);
                                supervisor.do_send(DestinationChanged(id))
                            }
                            Event::Wakeup(Ok(Wakeup::TaskChanged(id))) => changed.heard(id, keep),
                            Event::Wakeup(Err(_)) => break,
                            Event::Ping => match wakeups.ping(PING_WITHIN).await {
                                Ok(()) if every_process => targets.proven_alive(),
                                Ok(()) => {}
                                Err(e) => {
                                    warn!(log, "LISTEN connection did not answer a ping";
                                          "error" => %remit::error_chain(&e));
                                    break;
                                }
                            },
                        }
                    }
                    targets.set_listening(false);
                    warn!(log, "LISTEN connection lost; polling until it is back");
                }
                Ok(Err(e)) => {
                    warn!(log, "LISTEN unavailable; polling until it is back";
                          "error" => %remit::error_chain(&e));
                }
                Err(_) => {
                    warn!(log, "LISTEN connection not made in time; polling until it is back";
                          "within_ms" => CONNECT_WITHIN.as_millis());
                }
            }
            actix_rt::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(30));
        }
    })
}

/// Stops trusting kept destinations when dropped.
struct Listening(Targets);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.set_listening(false);
    }
}
