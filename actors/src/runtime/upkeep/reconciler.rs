//! The Reconciler: every `reconcile.interval_seconds` it runs the same
//! checks as `remit reconcile` for its region and logs what it finds. It
//! only reports; consumers recover expired leases by claiming them. Every
//! `metrics.queue_interval_seconds` it also refreshes the queue gauges of
//! /metrics from one query of the region's live tasks, and fails the
//! tasks of disabled destinations whose retry horizon has passed (they
//! would otherwise wait forever), and settles the changes (cancels, moves)
//! that waited for an attempt in flight to end.

use remit::store::{Changes, Reports, Upkeep};
use std::time::Duration;

use actix::prelude::*;
use remit::domain::ReconcileRequest;
use slog::{info, warn};

use super::super::shared::failpoint;
use super::super::shared::guard::{self, Guarded};
use super::super::shared::Shared;

pub struct Reconciler {
    shared: Shared,
}

impl std::fmt::Debug for Reconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconciler").finish_non_exhaustive()
    }
}

impl Reconciler {
    pub fn new(shared: Shared) -> Self {
        Self { shared }
    }

    fn check(&mut self, ctx: &mut Context<Self>) {
        if let Err(e) = failpoint::hit(failpoint::RECONCILE) {
            warn!(self.shared.log, "reconciler failing on purpose"; "failpoint" => %e);
            ctx.stop();
            return;
        }
        let request = ReconcileRequest {
            region: Some(self.shared.region),
            older_than: chrono::Duration::seconds(
                i64::try_from(self.shared.config.reconcile.older_than_seconds).unwrap_or(900),
            ),
            reclaim: false,
            ledger: None,
            list_limit: 5,
        };
        let store = self.shared.store.clone();
        guard::caught(async move { store.reconcile(&request).await })
            .into_actor(self)
            .map(|result, this, ctx| match result {
                Ok(Ok(report)) if report.is_clean() => {
                    info!(this.shared.log, "reconciliation: all well")
                }
                Ok(Ok(report)) => {
                    warn!(this.shared.log, "reconciliation found work that needs attention";
                    "expired_leases" => report.expired_leases.count,
                    "old_eligible" => report.old_eligible.count,
                    "past_horizon" => report.past_horizon.count)
                }
                Ok(Err(e)) => warn!(this.shared.log, "reconciliation failed";
                                "error" => %remit::error_chain(&e)),
                Err(panic) => {
                    warn!(this.shared.log, "reconciliation panicked; restarting the reconciler";
                          "panic" => %panic);
                    ctx.stop();
                }
            })
            .wait(ctx);
    }
}

impl Reconciler {
    fn measure(&mut self, ctx: &mut Context<Self>) {
        let metrics_of = self.shared.stats.clone();
        metrics_of
            .metrics
            .set_in_memory(self.shared.capacity.held());
        let store = self.shared.store.clone();
        let region = self.shared.region;
        guard::caught(async move { store.queue(region).await })
            .into_actor(self)
            .map(move |result, this, ctx| match result {
                Ok(Ok(queue)) => metrics_of.metrics.set_queue(&queue),
                Ok(Err(e)) => warn!(this.shared.log, "could not read the queue for its gauges";
                                "error" => %remit::error_chain(&e)),
                Err(panic) => {
                    warn!(this.shared.log, "the queue gauges panicked; restarting the reconciler";
                          "panic" => %panic);
                    ctx.stop();
                }
            })
            .wait(ctx);
        if self.shared.config.database.read_url.is_some() {
            self.measure_replica(ctx);
        }
    }

    /// How far the replica the reports read is behind, for its gauge.
    fn measure_replica(&mut self, ctx: &mut Context<Self>) {
        let metrics_of = self.shared.stats.clone();
        let reports = self.shared.reports.clone();
        guard::caught(async move { reports.read_source().await })
            .into_actor(self)
            .map(move |result, this, ctx| match result {
                Ok(Ok(source)) => metrics_of
                    .metrics
                    .set_replica_lag(source.and_then(|s| s.lag())),
                Ok(Err(e)) => {
                    warn!(this.shared.log, "could not read the replica's lag for its gauge";
                                "error" => %remit::error_chain(&e))
                }
                Err(panic) => {
                    warn!(this.shared.log, "the replica gauge panicked; restarting the reconciler";
                          "panic" => %panic);
                    ctx.stop();
                }
            })
            .wait(ctx);
    }
}

/// Most tasks of disabled destinations failed in one step.
const EXPIRE_BATCH: u32 = 1_000;

impl Reconciler {
    fn expire_disabled(&mut self, ctx: &mut Context<Self>) {
        let store = self.shared.store.clone();
        let region = self.shared.region;
        guard::caught(async move { store.fail_disabled_past_horizon(region, EXPIRE_BATCH).await })
            .into_actor(self)
            .map(|result, this, ctx| match result {
                Ok(Ok(0)) => {}
                Ok(Ok(n)) => {
                    for _ in 0..n {
                        this.shared.stats.metrics.failed("destination_disabled");
                    }
                    warn!(this.shared.log, "tasks of disabled destinations failed at their horizon";
                          "tasks" => n, "reason" => "destination_disabled");
                }
                Ok(Err(e)) => warn!(this.shared.log, "could not fail the tasks of disabled destinations";
                                "error" => %remit::error_chain(&e)),
                Err(panic) => {
                    warn!(this.shared.log, "failing disabled tasks panicked; restarting the reconciler";
                          "panic" => %panic);
                    ctx.stop();
                }
            })
            .wait(ctx);
    }
}

/// Most waiting changes settled in one step.
const SETTLE_BATCH: u32 = 500;

impl Reconciler {
    fn settle_changes(&mut self, ctx: &mut Context<Self>) {
        let store = self.shared.store.clone();
        let region = self.shared.region;
        guard::caught(async move { store.settle_changes(region, SETTLE_BATCH).await })
            .into_actor(self)
            .map(|result, this, ctx| match result {
                Ok(Ok(0)) => {}
                Ok(Ok(n)) => info!(this.shared.log, "changes settled after their attempts";
                                   "tasks" => n),
                Ok(Err(e)) => {
                    warn!(this.shared.log, "could not settle the changes waiting for attempts";
                                "error" => %remit::error_chain(&e))
                }
                Err(panic) => {
                    warn!(this.shared.log, "settling changes panicked; restarting the reconciler";
                          "panic" => %panic);
                    ctx.stop();
                }
            })
            .wait(ctx);
    }
}

impl Actor for Reconciler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let gauges = Duration::from_secs(self.shared.config.metrics.queue_interval_seconds.max(1));
        self.measure(ctx);
        self.expire_disabled(ctx);
        self.settle_changes(ctx);
        ctx.run_interval(gauges, |this, ctx| {
            guard::step(this, ctx, |this, ctx| this.measure(ctx));
            guard::step(this, ctx, |this, ctx| this.expire_disabled(ctx));
            guard::step(this, ctx, |this, ctx| this.settle_changes(ctx));
        });
        let every = self.shared.config.reconcile.interval_seconds;
        if every > 0 {
            ctx.run_interval(Duration::from_secs(every), |this, ctx| {
                guard::step(this, ctx, |this, ctx| this.check(ctx));
            });
        }
    }
}

impl Guarded for Reconciler {
    fn name(&self) -> String {
        "reconciler".to_owned()
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

impl Supervised for Reconciler {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.shared.stats.restarted("reconciler");
        self.shared.restarts.restarted("reconciler");
        warn!(self.shared.log, "reconciler restarting");
    }
}
