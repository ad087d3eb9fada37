//! The Alerter: every `events.check_interval_ms` it runs the region's
//! alert check (`Alerts::check_alerts`), which finds what a person should
//! hear about (tasks that ended failed, reminders late against their
//! deadline or near the end of their retry horizon, destinations failing
//! and recovered) and writes it, coalesced per destination, to the outbox
//! of operational events; the EventRelay sends those on. Each check is one
//! transaction under the region's lock, so the processes of a region may
//! all run one: a check that finds the lock held skips its turn, and none
//! announces a thing twice.
//!
//! Without an events receiver (`events.url` unset) it only drops the
//! recorded failures, so they do not pile up.

use std::time::Duration;

use actix::prelude::*;
use remit::store::Alerts;
use slog::{debug, info, warn};

use super::super::shared::guard::{self, Guarded};
use super::super::shared::Shared;

pub struct Alerter {
    shared: Shared,
}

impl std::fmt::Debug for Alerter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alerter").finish_non_exhaustive()
    }
}

impl Alerter {
    pub fn new(shared: Shared) -> Self {
        Self { shared }
    }

    fn check(&mut self, ctx: &mut Context<Self>) {
        let store = self.shared.store.clone();
        let check = self.shared.config.events.alert_check(self.shared.region);
        guard::caught(async move { store.check_alerts(&check).await })
            .into_actor(self)
            .map(|result, this, ctx| match result {
                Ok(Ok(done)) if done.busy => {
                    debug!(
                        this.shared.log,
                        "alert check skipped: another process of the region holds it"
                    )
                }
                Ok(Ok(done)) => {
                    this.shared
                        .stats
                        .metrics
                        .alert_check_found(done.late, done.horizon_ending);
                    if done.events > 0 {
                        info!(this.shared.log, "operational events written";
                              "events" => done.events, "failed" => done.failed,
                              "late" => done.late, "horizon_ending" => done.horizon_ending)
                    }
                }
                Ok(Err(e)) => warn!(this.shared.log, "the alert check failed";
                                "error" => %remit::error_chain(&e)),
                Err(panic) => {
                    warn!(this.shared.log, "the alert check panicked; restarting the alerter";
                          "panic" => %panic);
                    ctx.stop();
                }
            })
            .wait(ctx);
    }
}

impl Actor for Alerter {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let every = Duration::from_millis(self.shared.config.events.check_interval_ms.max(10));
        ctx.run_interval(every, |this, ctx| {
            guard::step(this, ctx, |this, ctx| this.check(ctx));
        });
    }
}

impl Guarded for Alerter {
    fn name(&self) -> String {
        "alerter".to_owned()
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

impl Supervised for Alerter {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.shared.stats.restarted("alerter");
        self.shared.restarts.restarted("alerter");
        warn!(self.shared.log, "alerter restarting");
    }
}
