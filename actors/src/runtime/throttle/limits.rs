//! A throttle's limits: the destination's own settings over the
//! configuration's, read from its row when the throttle starts, given by
//! the supervisor when a change is heard (`Retune`), and read again each
//! [`REREAD_LIMITS`] while no listener hears every process. The in-flight
//! cap is a number compared with the requests under way, so a change may
//! move it either way while requests are in flight.

use std::time::{Duration, Instant};

use actix::prelude::*;
use remit::domain::{DestinationSettings, SendTarget};
use slog::{debug, warn};

use super::actor::Throttle;
use crate::runtime::shared::batcher::BatchError;
use crate::runtime::shared::guard;
use crate::runtime::shared::messages::Retune;

/// How often a throttle reads its destination's limits again when no
/// listener tells it of a change (SQLite shared by several processes, or
/// LISTEN down).
const REREAD_LIMITS: Duration = Duration::from_secs(1);

impl Throttle {
    /// Requests that may start now under the destination's cap.
    pub(super) fn free_slots(&self) -> usize {
        let under_way = super::actor::COUNTING - self.in_flight.available_permits();
        (self.limits.max_in_flight as usize).saturating_sub(under_way)
    }

    /// Takes the destination's own limits (`settings`, over the
    /// configuration's), and sends what they now allow.
    pub(super) fn retune(&mut self, settings: &DestinationSettings, ctx: &mut Context<Self>) {
        let limits = self.shared.config.limits_of(&self.destination, settings);
        if limits != self.limits {
            debug!(self.shared.log, "destination limits changed"; "destination" => %self.destination,
                   "rate_per_second" => limits.rate_per_second, "burst" => limits.burst,
                   "max_in_flight" => limits.max_in_flight);
        }
        let keep = self.shared.paces_keep(&self.destination, &limits);
        self.shared.paces.took(&self.destination, limits, keep);
        self.limits = limits;
        self.limits_read = true;
        self.limits_read_at = Some(Instant::now());
        guard::step(self, ctx, |this, ctx| this.pump(ctx));
    }

    /// Reads the destination's row (kept for the sends that follow) for
    /// its own limits; without it, the configuration's limits go.
    pub(super) fn read_limits(&mut self, ctx: &mut Context<Self>) {
        if let Some(known) = self.shared.targets.get(&self.destination) {
            self.retune(&known.destination.settings, ctx);
            return;
        }
        if self.reading_limits {
            return;
        }
        self.reading_limits = true;
        let shared = self.shared.clone();
        let id = self.destination.clone();
        let retuned = self.retuned;
        let read = async move { shared.targets.read(&shared.store, &shared.log, &id).await };
        guard::caught(read)
            .into_actor(self)
            .map(move |result, this, ctx| {
                this.reading_limits = false;
                if this.retuned == retuned {
                    this.took_limits(result, ctx);
                }
            })
            .spawn(ctx);
    }

    /// What a read of the destination's row gave for its limits.
    fn took_limits(
        &mut self,
        result: Result<Result<Option<SendTarget>, BatchError>, guard::Panicked>,
        ctx: &mut Context<Self>,
    ) {
        let this = self;
        match result {
            Ok(Ok(Some(target))) => this.retune(&target.destination.settings, ctx),
            Ok(Ok(None)) => this.retune(&DestinationSettings::default(), ctx),
            Ok(Err(e)) => {
                warn!(this.shared.log, "could not read the destination's limits; using the configuration's";
                          "destination" => %this.destination, "error" => %remit::error_chain(&e));
                this.retune(&DestinationSettings::default(), ctx);
            }
            Err(panic) => {
                warn!(this.shared.log, "reading the destination's limits panicked; restarting the throttle";
                          "destination" => %this.destination, "panic" => %panic);
                ctx.stop();
            }
        }
    }

    /// Reads the limits again when they may be stale: a change is heard
    /// of at once only while the listener hears every process (the kept
    /// reading is then trusted); otherwise they are read each
    /// [`REREAD_LIMITS`], while this destination has work.
    pub(super) fn refresh_stale_limits(&mut self, ctx: &mut Context<Self>) {
        let stale = self
            .limits_read_at
            .is_some_and(|at| at.elapsed() >= REREAD_LIMITS);
        if stale && self.shared.targets.get(&self.destination).is_none() {
            self.limits_read_at = Some(Instant::now());
            self.read_limits(ctx);
        }
    }
}

impl Handler<Retune> for Throttle {
    type Result = ();

    fn handle(&mut self, Retune(settings): Retune, ctx: &mut Context<Self>) {
        self.retuned += 1;
        self.retune(&settings, ctx);
    }
}
