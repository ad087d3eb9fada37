//! Retention: which finished tasks may be forgotten, and what a pruning
//! run removed.
//!
//! Once a task is pruned its (tenant, reminder) pair is free again: the
//! same request scheduled later creates a new task and is delivered again.
//! The age kept must therefore outlast any producer's retry window.

use chrono::Duration;

use super::ids::Region;

/// Which terminal tasks to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneRequest {
    /// One region (a region's runtime prunes only its own), or every region.
    pub region: Option<Region>,
    /// Delivered and failed tasks whose `finalized_at` is older than this,
    /// measured on the store's clock, go with their attempts and payloads.
    pub older_than: Duration,
    /// Most tasks deleted in one transaction.
    pub batch_size: u32,
}

impl PruneRequest {
    /// The largest batch: each batch is one transaction, which must stay
    /// short because it holds row locks the claim skips over.
    pub const MAX_BATCH_SIZE: u32 = 10_000;
    /// The longest age that can be kept, in days; far beyond any sensible
    /// setting, and small enough that "now minus the age" is a timestamp.
    pub const MAX_AGE_DAYS: i64 = 100 * 365;
}

/// What a pruning run deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    pub tasks: u64,
    pub attempts: u64,
    pub payloads: u64,
    /// Transactions that deleted something.
    pub batches: u64,
}

impl PruneReport {
    /// Adds one batch's counts.
    pub fn add_batch(&mut self, tasks: u64, attempts: u64, payloads: u64) {
        if tasks > 0 {
            self.tasks += tasks;
            self.attempts += attempts;
            self.payloads += payloads;
            self.batches += 1;
        }
    }
}
