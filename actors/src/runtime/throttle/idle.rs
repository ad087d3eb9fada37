//! Evicting a throttle whose destination has no work here.
//!
//! A throttle is idle when nothing is queued, no request of its
//! destination is in flight (every in-flight permit is back), and no take
//! or wait for a slot is under way. Idle for [`IDLE_GRACE`], it tells the
//! supervisor, with the number of tasks it was ever handed. The supervisor
//! counts the tasks it sent: when the two agree no task is on its way, so
//! it stops routing to the throttle and tells it to go ([`Evict`]). The
//! throttle keeps what must outlive it and is dropped with its last
//! address. A destination whose tasks arrive again gets a fresh throttle,
//! which reads its shared state as the first one did.
//!
//! Nothing is lost with it:
//! - its pause lives in `Shared::pauses` and in the destination's row;
//! - in-flight accounting: no permit is out, and a sender wakes the
//!   throttle before it lets its permit go, so a token handed back unsent
//!   is counted here before the throttle can be idle;
//! - tokens taken and not spent pass to the next throttle (`spare::SpareTokens`);
//! - what it waits for in the database (a bucket's next token) is held in
//!   `Shared::busy`, which the claimer consults, and in the bucket's row.

use std::sync::atomic::Ordering;
use std::time::Duration;

use actix::prelude::*;
use slog::error;

use super::actor::Throttle;
use crate::runtime::shared::guard;
use crate::runtime::shared::messages::{Evict, Idle};

/// How long a throttle stays idle before it asks to be evicted: long
/// enough that a destination with a steady stream of tasks keeps its
/// throttle (and its kept row) from one claim to the next (claims come
/// every few milliseconds while there is work), short enough that a drain
/// over many destinations holds only a quarter of a second's worth. With a
/// whole second, a drain of 20,000 tasks over 20,000 destinations peaked at
/// 64 MiB against 35 MiB, at the same rate (docs/benchmarks.md). What it
/// costs: a destination whose tasks come between a quarter and a whole
/// second apart now gets a fresh throttle for each, which reads its limits
/// and its row again.
pub const IDLE_GRACE: Duration = Duration::from_millis(250);

impl Throttle {
    fn idle(&self) -> bool {
        self.queue.is_empty()
            && !self.asking
            && !self.waiting_for_slot
            && self.in_flight.available_permits() == super::actor::COUNTING
    }

    /// Starts the idle grace when nothing is left here, and ends it as
    /// soon as something is.
    pub(super) fn watch_idle(&mut self, ctx: &mut Context<Self>) {
        if !self.idle() || ctx.state() != ActorState::Running {
            if let Some(handle) = self.idle_check.take() {
                ctx.cancel_future(handle);
            }
            return;
        }
        if self.idle_check.is_some() {
            return;
        }
        self.idle_check = Some(ctx.run_later(IDLE_GRACE, |this, _| {
            this.idle_check = None;
            if !this.idle() {
                return;
            }
            if let Some(supervisor) = this.keeper.supervisor.upgrade() {
                supervisor.do_send(Idle {
                    destination: this.destination.clone(),
                    throttle: this.keeper.id,
                    admitted: this.admitted,
                });
            }
        }));
    }
}

impl Handler<Evict> for Throttle {
    type Result = ();

    /// Nothing can arrive any more but wakes that change nothing: every
    /// task sent here was admitted, and nothing is in flight.
    fn handle(&mut self, _: Evict, ctx: &mut Context<Self>) {
        guard::step(self, ctx, |this, ctx| {
            if let Some(handle) = this.idle_check.take() {
                ctx.cancel_future(handle);
            }
            if !this.idle() {
                // Cannot happen while the counts agree; should it, the
                // queue goes back rather than being held by a throttle
                // nothing routes to.
                error!(this.shared.log, "an evicted throttle still had work; handing it back";
                       "destination" => %this.destination, "queued" => this.queue.len());
                this.hand_back_all(None);
            }
            let unspent = this.tokens.take_all();
            this.keeper
                .spare
                .deposit(&this.destination, unspent, &this.limits);
            // The row is read again with the next throttle: kept rows
            // follow the destinations in flight too.
            this.shared.targets.forget(&this.destination);
            this.shared.paces.released(&this.destination);
        });
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        self.shared.stats.throttles.fetch_sub(1, Ordering::Relaxed);
    }
}
