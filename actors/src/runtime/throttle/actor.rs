//! The Throttle actor: a destination's tasks admitted as its bucket, its
//! cap on requests in flight and its pause allow, or sent back.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use remit::domain::DestinationId;
use remit::store::{RateGrant, RateRequest};
use slog::{debug, warn};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::super::finish::hand_back::hand_back;
use super::super::finish::retry;
use super::super::send::pool::SenderPool;
use super::super::shared::batcher::BatchError;
use super::super::shared::failpoint;
use super::super::shared::guard::{self, Guarded};
use super::super::shared::messages::{Admit, Deliver, Drain, InFlight, Wake, Work};
use super::super::shared::Shared;
use super::keeper::Keeper;
use super::unspent::Unspent;
use crate::config::ThrottleLimits;

/// Permits of the semaphore that counts requests in flight: more than any
/// cap a destination may have.
pub(super) const COUNTING: usize = 1 << 24;

pub struct Throttle {
    pub(super) shared: Shared,
    pub(super) destination: DestinationId,
    pub(super) limits: ThrottleLimits,
    /// Tokens taken from the shared bucket and not yet used.
    pub(super) tokens: Unspent,
    /// A take is under way; one at a time.
    pub(super) asking: bool,
    pub(super) senders: SenderPool,
    pub(super) queue: VecDeque<Work>,
    /// Counts the requests in flight: a sender holds a permit while its
    /// request is under way. It survives this actor's restarts, so a
    /// restart can neither forget nor double-count a request in flight. It
    /// only counts ([`COUNTING`] permits); the cap is `limits.max_in_flight`,
    /// which a change of the destination's settings may move either way
    /// while requests are under way.
    pub(super) in_flight: Arc<Semaphore>,
    /// Whether `limits` are the destination's own, read from its row; until
    /// then nothing is taken from its bucket.
    pub(super) limits_read: bool,
    /// When they were last read (or retuned), and whether a read is under
    /// way: without a listener that hears every process, they are read
    /// again each [`REREAD_LIMITS`].
    pub(super) limits_read_at: Option<Instant>,
    pub(super) reading_limits: bool,
    /// Counts the settings the supervisor sent (`Retune`): a read begun
    /// before the latest of them answers with what was there before, and
    /// is dropped.
    pub(super) retuned: u64,
    pub(super) draining: bool,
    pub(super) wake: Option<SpawnHandle>,
    pub(super) backoff: Option<Duration>,
    /// The wait before the next take, while takes keep failing.
    pub(super) take_retry: Option<Duration>,
    /// A slot under the process's in-flight cap, taken while waiting for
    /// one and kept for the next request.
    pub(super) process_slot: Option<OwnedSemaphorePermit>,
    pub(super) waiting_for_slot: bool,
    /// Who routes tasks here, and what it keeps when this one is evicted.
    pub(super) keeper: Keeper,
    /// Tasks handed in so far, over every restart.
    pub(super) admitted: u64,
    /// The eviction pending while nothing is queued or in flight.
    pub(super) idle_check: Option<SpawnHandle>,
    /// When a request of this destination last gave its slot back.
    pub(super) last_freed: Option<Instant>,
    /// A [`Pump`] is on its way to this actor.
    pub(super) pump_due: bool,
}

/// To the Throttle itself: look at the queue, once the messages already
/// in its mailbox are in. Tasks arrive one `Admit` each and a batch's
/// sends end one `Wake` each; moving the queue at every one of them would
/// take tokens for the first task alone (and for each freed slot), a round
/// trip to the buckets each, while the rest of the claim waits behind it.
#[derive(Debug, Message)]
#[rtype(result = "()")]
struct Pump;

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("destination", &self.destination)
            .field("queued", &self.queue.len())
            .field("draining", &self.draining)
            .finish_non_exhaustive()
    }
}

impl Throttle {
    pub fn new(
        shared: Shared,
        destination: DestinationId,
        senders: SenderPool,
        keeper: Keeper,
    ) -> Self {
        // What the destination's last throttle took, until its row is read.
        let limits = shared
            .paces
            .limits(&destination)
            .unwrap_or_else(|| shared.config.throttle_for(&destination));
        shared.stats.throttles.fetch_add(1, Ordering::Relaxed);
        Self {
            tokens: Unspent::default(),
            asking: false,
            in_flight: Arc::new(Semaphore::new(COUNTING)),
            limits_read: false,
            limits_read_at: None,
            reading_limits: false,
            retuned: 0,
            shared,
            destination,
            limits,
            senders,
            queue: VecDeque::new(),
            draining: false,
            wake: None,
            backoff: None,
            take_retry: None,
            process_slot: None,
            waiting_for_slot: false,
            keeper,
            admitted: 0,
            idle_check: None,
            last_freed: None,
            pump_due: false,
        }
    }

    /// Sends what the tokens and the in-flight cap allow; hands back what
    /// cannot go soon enough. Once nothing is left here, waits to be
    /// evicted.
    pub(super) fn pump(&mut self, ctx: &mut Context<Self>) {
        self.move_queue(ctx);
        self.watch_idle(ctx);
    }

    /// Pumps once the mailbox's waiting `Admit`s and `Wake`s are in.
    fn pump_soon(&mut self, ctx: &mut Context<Self>) {
        if !self.pump_due {
            self.pump_due = true;
            ctx.notify(Pump);
        }
    }

    fn move_queue(&mut self, ctx: &mut Context<Self>) {
        if let Some(handle) = self.wake.take() {
            ctx.cancel_future(handle);
        }
        if let Err(e) = failpoint::hit(failpoint::THROTTLE_PUMP) {
            warn!(self.shared.log, "throttle failing on purpose"; "failpoint" => %e);
            ctx.stop();
            return;
        }
        if self.draining {
            self.hand_back_all(None);
            return;
        }
        if let Some(left) = self.shared.pauses.left(&self.destination) {
            self.hand_back_all(Some(left));
            return;
        }
        if self.tokens.is_empty() && !self.queue.is_empty() {
            // What an evicted throttle of this destination left unspent.
            for number in self.keeper.spare.withdraw(&self.destination) {
                self.tokens.put_back(number);
            }
        }
        while !self.tokens.is_empty() && !self.queue.is_empty() {
            if self.free_slots() == 0 {
                self.shared.stats.metrics.throttle_wait(&self.destination);
                break;
            }
            let Ok(destination) = self.in_flight.clone().try_acquire_owned() else {
                break;
            };
            let Some(process) = self
                .process_slot
                .take()
                .or_else(|| self.shared.requests.clone().try_acquire_owned().ok())
            else {
                self.wait_for_process_slot(ctx);
                break;
            };
            let Some(work) = self.queue.pop_front() else {
                return;
            };
            let Some(token) = self.tokens.spend() else {
                self.queue.push_front(work);
                return;
            };
            self.senders.next().do_send(Deliver {
                work,
                token,
                in_flight: InFlight {
                    destination,
                    process,
                },
                throttle: ctx.address().recipient(),
            });
        }
        if self.queue.is_empty() {
            // A slot kept for nothing would hold back other destinations.
            self.process_slot = None;
            return;
        }
        self.hold_claims_while_queued();
        if self.free_slots() == 0 || self.waiting_for_slot {
            self.hand_back_before_overstay(ctx);
            return;
        }
        self.take_tokens(ctx);
    }

    /// The process has as many requests under way as it may: wait for the
    /// next slot to free, wherever it frees, and keep it for the head of
    /// the queue.
    fn wait_for_process_slot(&mut self, ctx: &mut Context<Self>) {
        if self.waiting_for_slot {
            return;
        }
        self.waiting_for_slot = true;
        let requests = self.shared.requests.clone();
        ctx.spawn(
            async move { requests.acquire_owned().await.ok() }
                .into_actor(self)
                .map(|slot, this, ctx| {
                    this.waiting_for_slot = false;
                    this.process_slot = slot;
                    guard::step(this, ctx, |this, ctx| this.pump(ctx));
                }),
        );
    }

    fn take_tokens(&mut self, ctx: &mut Context<Self>) {
        if self.asking || !self.limits_read {
            return;
        }
        self.refresh_stale_limits(ctx);
        self.asking = true;
        let want = u32::try_from(self.queue.len().min(self.free_slots())).unwrap_or(u32::MAX);
        let buckets = self.shared.buckets.clone();
        let ask = RateRequest {
            destination: self.destination.clone(),
            rate_per_second: self.limits.rate_per_second,
            burst: self.limits.burst,
            want,
        };
        let take = async move { buckets.call(ask).await };
        guard::caught(take)
            .into_actor(self)
            .map(|result, this, ctx| {
                this.asking = false;
                let result = match result {
                    Ok(result) => result,
                    Err(panic) => {
                        warn!(this.shared.log, "taking tokens panicked; restarting the throttle";
                              "destination" => %this.destination, "panic" => %panic);
                        ctx.stop();
                        return;
                    }
                };
                guard::step(this, ctx, |this, ctx| match result {
                    Ok(Some(RateGrant::Granted { tokens, last })) => {
                        this.take_retry = None;
                        this.shared.restarts.recovered(&this.name());
                        this.tokens.granted(tokens, last);
                        this.pump(ctx);
                    }
                    Ok(Some(RateGrant::WaitFor(wait))) => {
                        this.take_retry = None;
                        this.shared.stats.metrics.throttle_wait(&this.destination);
                        this.wait_for_token(wait, ctx)
                    }
                    Ok(None) => {
                        // Without its row nothing may be sent; the sends
                        // say why when they read it.
                        warn!(this.shared.log, "the destination's bucket is gone; handing tasks back";
                              "destination" => %this.destination);
                        this.hand_back_all(None);
                    }
                    Err(e) => this.take_failed(&e, ctx),
                });
            })
            .spawn(ctx);
    }

    /// Without the shared bucket nothing may be sent, but the queued tasks
    /// keep their leases: try again shortly, while the oldest of them still
    /// has time for a send after the wait; then hand them back.
    fn take_failed(&mut self, e: &BatchError, ctx: &mut Context<Self>) {
        let wait = self.take_retry.map_or(retry::FIRST, retry::next);
        self.take_retry = Some(wait);
        let Some(head) = self.queue.front() else {
            return;
        };
        let needs = self
            .shared
            .send_timeout()
            .saturating_add(self.shared.finish_margin());
        let usable = head
            .claimed_at
            .checked_add(self.shared.lease().saturating_sub(needs));
        let stopping = matches!(e, BatchError::Stopped);
        if !stopping && usable.is_some_and(|at| Instant::now() + wait < at) {
            warn!(self.shared.log, "could not take a token; trying again";
                  "destination" => %self.destination, "after_ms" => wait.as_millis(),
                  "error" => %remit::error_chain(e));
            self.wake = Some(ctx.run_later(wait, |this, ctx| {
                guard::step(this, ctx, |this, ctx| this.pump(ctx));
            }));
            return;
        }
        warn!(self.shared.log, "could not take a token; handing tasks back";
              "destination" => %self.destination, "error" => %remit::error_chain(e));
        self.hand_back_all(None);
    }

    /// Hands every queued task back to the database, eligible again
    /// `after` from the database's now (or at once).
    pub(super) fn hand_back_all(&mut self, after: Option<Duration>) {
        // Nothing queued here needs a slot under the process's cap.
        self.process_slot = None;
        if self.queue.is_empty() {
            return;
        }
        let tasks: Vec<Work> = self.queue.drain(..).collect();
        debug!(self.shared.log, "handing tasks back"; "destination" => %self.destination,
               "count" => tasks.len(), "after_ms" => after.map(|d| d.as_millis()));
        hand_back(&self.shared, tasks, after);
    }
}

impl Actor for Throttle {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Some(backoff) = self.backoff.take() {
            ctx.wait(actix_rt::time::sleep(backoff).into_actor(self));
        }
        // A restart hands everything queued back: nothing may come next.
        self.watch_idle(ctx);
        self.read_limits(ctx);
    }
}

impl Guarded for Throttle {
    fn name(&self) -> String {
        format!("throttle-{}", self.destination)
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

impl Supervised for Throttle {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.shared.stats.restarted("throttle");
        self.backoff = Some(self.shared.restarts.restarted(&self.name()));
        warn!(self.shared.log, "throttle restarting"; "destination" => %self.destination);
        // Whatever was queued goes back rather than being forgotten; the
        // in-flight slots are owned by the senders and come back by
        // themselves.
        self.hand_back_all(None);
        self.asking = false;
        self.tokens = Unspent::default();
        self.wake = None;
        self.take_retry = None;
        // The wait for a slot, the idle check and a read of the limits
        // died with the old context.
        self.waiting_for_slot = false;
        self.reading_limits = false;
        self.limits_read_at = None;
        self.idle_check = None;
        self.pump_due = false;
    }
}

impl Handler<Admit> for Throttle {
    type Result = ();

    fn handle(&mut self, Admit(work): Admit, ctx: &mut Context<Self>) {
        self.admitted += 1;
        self.queue.push_back(work);
        self.pump_soon(ctx);
    }
}

impl Handler<Pump> for Throttle {
    type Result = ();

    fn handle(&mut self, _: Pump, ctx: &mut Context<Self>) {
        self.pump_due = false;
        guard::step(self, ctx, |this, ctx| this.pump(ctx));
    }
}

impl Handler<Wake> for Throttle {
    type Result = ();

    fn handle(&mut self, wake: Wake, ctx: &mut Context<Self>) {
        self.last_freed = Some(Instant::now());
        if let Some(token) = wake.unsent {
            // Kept for the next request: the bucket charges requests sent.
            self.tokens.put_back(token);
        }
        self.pump_soon(ctx);
    }
}

impl Handler<Drain> for Throttle {
    type Result = ();

    fn handle(&mut self, _: Drain, ctx: &mut Context<Self>) {
        self.draining = true;
        guard::step(self, ctx, |this, ctx| this.pump(ctx));
    }
}
