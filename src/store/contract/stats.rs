//! Counters of what a store saw; the runtime exports them as metrics.

use std::sync::atomic::{AtomicU64, Ordering};

/// What one store (and its clones) claimed, reclaimed and fenced.
#[derive(Debug, Default)]
pub struct StoreStats {
    pub claimed: AtomicU64,
    /// Claims that took over an expired lease.
    pub reclaimed: AtomicU64,
    /// Finishes refused because the lease had moved on.
    pub fenced: AtomicU64,
}

impl StoreStats {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
