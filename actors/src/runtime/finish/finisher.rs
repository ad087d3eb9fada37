//! The Finisher: the outcomes of many deliveries committed together, one
//! `Leases::finish_many` per batch. A delivery is answered only after the
//! commit, so nothing is acknowledged (its slot freed, its throttle told)
//! before its next state is durable; when a commit fails, each delivery
//! retries on its own while its lease lasts.

use remit::store::{Database, Finish, Leases, TransitionOutcome};
use std::sync::Arc;

use slog::warn;

use super::super::shared::runtime_stats::RuntimeStats;

use super::super::shared::batcher::Batcher;

pub type Finisher = Batcher<Finish, TransitionOutcome>;

/// Most finishes in one commit.
const BATCH: usize = 256;

/// Commits in flight at once, so a batch can gather and go while an
/// earlier one waits for its flush to disk. Two, not more: each finish
/// costs the server a fixed part whatever its size, and with four in
/// flight batches stayed small (a drain to one destination: 14 finishes a
/// call with four, 17 with two, and 10 % more deliveries a second;
/// docs/benchmarks.md, "Planned once").
const COMMITS: usize = 2;

/// Starts the finisher. A destination a batch disabled is told once, at
/// warn, by the process whose finish tipped it (never a payload: only its
/// id, region, reason and last error).
pub fn start(store: Database, log: slog::Logger, stats: Arc<RuntimeStats>) -> Finisher {
    let told = log.clone();
    Batcher::start(
        "finisher",
        COMMITS,
        BATCH,
        log,
        move |batch: Vec<Finish>| {
            let store = store.clone();
            let log = told.clone();
            let stats = stats.clone();
            async move {
                let finished = store.finish_many(&batch).await?;
                for d in &finished.disabled {
                    let d = &d.destination;
                    stats.metrics.auto_disabled();
                    warn!(log, "destination disabled after a failure streak";
                          "destination" => d.id.as_str(),
                          "destination_region" => d.region.as_str(),
                          "reason" => d.health.disabled_reason.as_deref(),
                          "last_error" => d.health.last_error.as_deref());
                }
                Ok(finished.outcomes)
            }
        },
    )
}
