//! What a region's runtime counts, shared by every actor and read by the
//! API's /metrics and health answers.

use std::sync::atomic::{AtomicU64, Ordering};

use super::delivery_summary::DeliverySummary;
use super::metrics::Metrics;

/// What the runtime counts: the labelled series /metrics serves, and the
/// process's total of actor restarts, read without parsing them.
#[derive(Debug)]
pub struct RuntimeStats {
    pub metrics: Metrics,
    /// Actors restarted by a supervisor.
    pub restarts: AtomicU64,
    /// Throttles in memory now: one per destination with work here, or
    /// idle for a moment.
    pub throttles: AtomicU64,
    /// Each destination's deliveries since the last summary line.
    pub summary: DeliverySummary,
}

impl RuntimeStats {
    pub fn new(metrics: Metrics) -> Self {
        Self {
            metrics,
            restarts: AtomicU64::default(),
            throttles: AtomicU64::default(),
            summary: DeliverySummary::default(),
        }
    }

    /// An actor of kind `actor` (`sender`, `throttle`, …) restarts.
    pub fn restarted(&self, actor: &'static str) {
        Self::bump(&self.restarts);
        self.metrics.restarted(actor);
    }

    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn read(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
