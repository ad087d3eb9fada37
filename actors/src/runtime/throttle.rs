//! A Throttle per destination: tokens from the destination's bucket (kept
//! in the database, so the rate holds across every process of the region),
//! a cap on requests in flight, and a pause after a 429 that holds all its
//! tasks.
//!
//! Nothing waits here for long. A task that would wait past a small
//! fraction of its lease, or whose destination is paused, goes back to the
//! database (released, not counted as an attempt) with the time it may be
//! claimed again.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::{DateTime, Utc};
use remit::domain::DestinationId;
use remit::store::{Store, Tokens, TransitionOutcome};
use slog::{debug, info, warn};

use super::messages::{Admit, Deliver, Drain, Sent, Work};
use super::{RuntimeStats, SenderPool, Shared};
use crate::config::ThrottleLimits;

pub struct Throttle {
    shared: Shared,
    destination: DestinationId,
    limits: ThrottleLimits,
    /// Tokens taken from the shared bucket and not yet used.
    tokens: u32,
    /// A take is under way; one at a time.
    asking: bool,
    senders: SenderPool,
    queue: VecDeque<Work>,
    in_flight: u32,
    paused_until: Option<DateTime<Utc>>,
    draining: bool,
    wake: Option<SpawnHandle>,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("destination", &self.destination)
            .field("in_flight", &self.in_flight)
            .field("paused_until", &self.paused_until)
            .field("draining", &self.draining)
            .finish_non_exhaustive()
    }
}

impl Throttle {
    pub fn new(shared: Shared, destination: DestinationId, senders: SenderPool) -> Self {
        let limits = shared.config.throttle_for(&destination);
        Self {
            tokens: 0,
            asking: false,
            shared,
            destination,
            limits,
            senders,
            queue: VecDeque::new(),
            in_flight: 0,
            paused_until: None,
            draining: false,
            wake: None,
        }
    }

    /// Sends what the tokens and the in-flight cap allow; hands back what
    /// cannot go soon enough.
    fn pump(&mut self, ctx: &mut Context<Self>) {
        if let Some(handle) = self.wake.take() {
            ctx.cancel_future(handle);
        }
        if self.draining {
            self.release_all(None);
            return;
        }
        if let Some(until) = self.paused_until {
            if until > Utc::now() {
                self.release_all(Some(until));
                return;
            }
            self.paused_until = None;
        }
        while self.in_flight < self.limits.max_in_flight && self.tokens > 0 {
            let Some(work) = self.queue.pop_front() else {
                return;
            };
            self.tokens -= 1;
            self.in_flight += 1;
            self.senders.next().do_send(Deliver {
                work,
                throttle: ctx.address().recipient(),
            });
        }
        if self.queue.is_empty() {
            return;
        }
        if self.in_flight >= self.limits.max_in_flight {
            self.hold_at_most_until_due(ctx);
            return;
        }
        self.take_tokens(ctx);
    }

    fn take_tokens(&mut self, ctx: &mut Context<Self>) {
        if self.asking {
            return;
        }
        self.asking = true;
        let want = u32::try_from(self.queue.len())
            .unwrap_or(u32::MAX)
            .min(self.limits.max_in_flight - self.in_flight);
        let store = self.shared.store.clone();
        let destination = self.destination.clone();
        let limits = self.limits;
        async move {
            store
                .take_tokens(&destination, limits.rate_per_second, limits.burst, want)
                .await
        }
        .into_actor(self)
        .map(|result, this, ctx| {
            this.asking = false;
            match result {
                Ok(Tokens::Granted(n)) => {
                    this.tokens += n;
                    this.pump(ctx);
                }
                Ok(Tokens::WaitFor(wait)) => this.wait_for_token(wait, ctx),
                Err(e) => {
                    // Without the shared bucket nothing may be sent; hand the
                    // tasks back rather than hold them.
                    warn!(this.shared.log, "could not take a token; handing tasks back";
                          "destination" => %this.destination, "error" => %crate::error_chain(&e));
                    this.release_all(None);
                }
            }
        })
        .spawn(ctx);
    }

    /// Waits for the next token, unless that would keep the oldest queued
    /// task in memory past a small fraction of its lease.
    fn wait_for_token(&mut self, wait: Duration, ctx: &mut Context<Self>) {
        let Some(head) = self.queue.front() else {
            return;
        };
        let waited = Instant::now().saturating_duration_since(head.claimed_at);
        if waited + wait > self.shared.max_hold() {
            // Back to the database, claimable again about when a token
            // would be there for each task.
            let position = u32::try_from(self.queue.len()).unwrap_or(u32::MAX);
            let eta = wait + per_token(&self.limits) * position.saturating_sub(1);
            let at = Utc::now() + chrono::Duration::from_std(eta).unwrap_or_default();
            self.release_all(Some(at));
            return;
        }
        self.wake = Some(ctx.run_later(wait, |this, ctx| this.pump(ctx)));
    }

    /// At the in-flight cap nothing moves until a send ends; make sure the
    /// oldest queued task is handed back if that takes longer than it may
    /// wait here.
    fn hold_at_most_until_due(&mut self, ctx: &mut Context<Self>) {
        let Some(head) = self.queue.front() else {
            return;
        };
        let waited = Instant::now().saturating_duration_since(head.claimed_at);
        let Some(left) = self.shared.max_hold().checked_sub(waited) else {
            self.release_all(None);
            return;
        };
        self.wake = Some(ctx.run_later(left, |this, ctx| this.pump(ctx)));
    }

    /// Hands every queued task back to the database, eligible again at
    /// `until` (or at once).
    fn release_all(&mut self, until: Option<DateTime<Utc>>) {
        if self.queue.is_empty() {
            return;
        }
        let tasks: Vec<Work> = self.queue.drain(..).collect();
        debug!(self.shared.log, "handing tasks back"; "destination" => %self.destination,
               "count" => tasks.len(), "until" => ?until);
        release(&self.shared, tasks, until);
    }
}

/// Releases tasks in the background, detached from any actor so that a
/// stopping actor cannot cancel them; each frees its place in memory once
/// the database has it back.
pub fn release(shared: &Shared, tasks: Vec<Work>, until: Option<DateTime<Utc>>) {
    for work in tasks {
        let shared = shared.clone();
        actix_rt::spawn(async move {
            let lease = work.claimed.lease();
            match shared.store.release(&lease, until).await {
                Ok(TransitionOutcome::Applied) => RuntimeStats::bump(&shared.stats.released),
                Ok(outcome) => {
                    info!(shared.log, "release refused"; "task" => %lease.task_id, "outcome" => ?outcome)
                }
                // The lease expires on its own; nothing is lost.
                Err(e) => warn!(shared.log, "release failed; the lease will expire";
                                "task" => %lease.task_id, "error" => %crate::error_chain(&e)),
            }
            shared.capacity.give_back();
        });
    }
}

fn per_token(limits: &ThrottleLimits) -> Duration {
    Duration::from_secs_f64(1.0 / limits.rate_per_second)
}

impl Actor for Throttle {
    type Context = Context<Self>;
}

impl Supervised for Throttle {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        RuntimeStats::bump(&self.shared.stats.restarts);
        warn!(self.shared.log, "throttle restarting"; "destination" => %self.destination);
        // Whatever was queued goes back rather than being forgotten.
        self.release_all(None);
        self.in_flight = 0;
        self.asking = false;
    }
}

impl Handler<Admit> for Throttle {
    type Result = ();

    fn handle(&mut self, Admit(work): Admit, ctx: &mut Context<Self>) {
        self.queue.push_back(work);
        self.pump(ctx);
    }
}

impl Handler<Sent> for Throttle {
    type Result = ();

    fn handle(&mut self, sent: Sent, ctx: &mut Context<Self>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if let Some(until) = sent.pause_until {
            if self.paused_until.is_none_or(|p| p < until) {
                info!(self.shared.log, "destination paused by the receiver";
                      "destination" => %self.destination, "until" => %until);
                self.paused_until = Some(until);
            }
        }
        self.pump(ctx);
    }
}

impl Handler<Drain> for Throttle {
    type Result = ();

    fn handle(&mut self, _: Drain, ctx: &mut Context<Self>) {
        self.draining = true;
        self.pump(ctx);
    }
}
