//! The Pruner: keeps the region's `tasks` table to recent history. It
//! deletes the region's delivered and failed tasks older than
//! `retention.keep_days`, batch after batch until a batch comes back short,
//! and the audit log's entries older than `retention.audit_keep_days` (of
//! every region: the log is the database's, and a delete of what another
//! region's pruner deleted first deletes nothing), //! and its destinations' hourly health that ended more than
//! `retention.stats_keep_days` ago, then sleeps
//! `retention.interval_seconds` and goes again. A failed run is logged and
//! retried at the next interval.
//!
//! It never holds delivery up: it prunes only its own region, through a
//! database connection of its own (the claimer and the senders never wait
//! for it), one short transaction per batch.

use remit::store::{Database, StoreError, Upkeep};
use std::time::Duration;

use actix::prelude::*;
use remit::domain::{PruneReport, PruneRequest};
use slog::{debug, info, warn};

use super::super::shared::guard::{self, Guarded};
use super::super::shared::Shared;

pub struct Pruner {
    shared: Shared,
    /// Opened by the first run and kept; `None` until then, or while the
    /// database cannot be reached.
    store: Option<Database>,
    /// Set by a restart: the first run then waits a whole interval, as
    /// after a failed run, so a run that panics is not retried at once.
    restarted: bool,
}

impl std::fmt::Debug for Pruner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pruner").finish_non_exhaustive()
    }
}

impl Pruner {
    pub fn new(shared: Shared) -> Self {
        Self {
            shared,
            store: None,
            restarted: false,
        }
    }

    fn interval(&self) -> Duration {
        Duration::from_secs(self.shared.config.retention.interval_seconds.max(1))
    }

    fn run_after(&self, delay: Duration, ctx: &mut Context<Self>) {
        ctx.run_later(delay, |this, ctx| {
            guard::step(this, ctx, |this, ctx| this.run(ctx));
        });
    }

    fn run(&mut self, ctx: &mut Context<Self>) {
        let retention = &self.shared.config.retention;
        let request = PruneRequest {
            region: Some(self.shared.region),
            older_than: retention.keep(),
            batch_size: retention.batch_size,
        };
        let audit_keep = retention.audit_keep();
        let request_region = self.shared.region;
        let batch_size = retention.batch_size;
        let stats_keep = retention.stats_keep();
        let own = self.store.clone();
        let shared = self.shared.store.clone();
        let run = async move {
            let store = match own {
                Some(store) => store,
                None => match shared.with_own_pool(1).await {
                    Ok(store) => store,
                    Err(e) => return (None, Err(e)),
                },
            };
            let report = match store.prune(&request).await {
                Ok(tasks) => store
                    // Its region's entries, to its own retention; those of
                    // no region are an operator's (`remit prune`).
                    .prune_audit(
                        remit::store::AuditScope::Region(request_region),
                        audit_keep,
                        batch_size,
                    )
                    .await
                    .map(|entries| (tasks, entries)),
                Err(e) => Err(e),
            };
            let report = match report {
                Ok((tasks, entries)) => store
                    .prune_destination_stats(request.region, stats_keep)
                    .await
                    .map(|hours| (tasks, entries, hours)),
                Err(e) => Err(e),
            };
            (Some(store), report)
        };
        guard::caught(run)
            .into_actor(self)
            .map(|result, this, ctx| match result {
                Ok((store, report)) => {
                    if store.is_some() {
                        this.store = store;
                    }
                    this.report(report);
                    this.run_after(this.interval(), ctx);
                }
                Err(panic) => {
                    warn!(this.shared.log, "pruning panicked; restarting the pruner";
                          "panic" => %panic);
                    ctx.stop();
                }
            })
            .spawn(ctx);
    }

    fn report(&self, report: Result<(PruneReport, u64, u64), StoreError>) {
        let log = &self.shared.log;
        let retention = &self.shared.config.retention;
        if let Ok((_, entries, _)) = &report {
            if *entries > 0 {
                info!(log, "pruned audit entries";
                    "entries" => entries, "audit_keep_days" => retention.audit_keep_days);
            }
        }
        match report {
            Ok((r, _, hours)) if r.tasks > 0 || hours > 0 => info!(log, "pruned terminal tasks";
                "tasks" => r.tasks, "attempts" => r.attempts, "payloads" => r.payloads,
                "batches" => r.batches, "keep_days" => retention.keep_days,
                "destination_stats" => hours, "stats_keep_days" => retention.stats_keep_days),
            Ok(_) => debug!(log, "nothing to prune"),
            Err(e) => warn!(log, "pruning failed; retrying at the next interval";
                            "error" => %remit::error_chain(&e)),
        }
    }
}

impl Actor for Pruner {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if !self.shared.config.retention.enabled {
            info!(
                self.shared.log,
                "retention is off (retention.enabled = false)"
            );
            return;
        }
        let first = if self.restarted {
            self.interval()
        } else {
            Duration::ZERO
        };
        self.run_after(first, ctx);
    }
}

impl Guarded for Pruner {
    fn name(&self) -> String {
        "pruner".to_owned()
    }

    fn log(&self) -> &slog::Logger {
        &self.shared.log
    }
}

impl Supervised for Pruner {
    /// Counted with the other restarts, but kept out of the restart streaks
    /// that /readyz reads: a pruner in trouble does not stop delivery.
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        self.shared.stats.restarted("pruner");
        self.restarted = true;
        warn!(self.shared.log, "pruner restarting");
    }
}
