//! Retention over the model, mirroring `store/postgres/retention.rs`: the same
//! cutoff, the same oldest-first batches, the same counts.

use std::collections::HashSet;

use super::store::MemStore;
use crate::domain::{PruneReport, PruneRequest, Region, TaskId};
use crate::store::contract::StoreError;
use crate::store::rules::requests;

impl MemStore {
    pub(super) fn prune_now(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        requests::check_prune(request)?;
        let cutoff = self
            .now()
            .checked_sub_signed(request.older_than)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        let size = request.batch_size as usize;
        let mut state = self.state.lock();
        state.record_failures();
        let regions: Vec<Region> = match request.region {
            Some(region) => vec![region],
            None => {
                let mut all: Vec<Region> = state.tasks.iter().map(|t| t.region).collect();
                all.sort_unstable();
                all.dedup();
                all
            }
        };
        let mut report = PruneReport::default();
        for region in regions {
            let mut doomed: Vec<_> = state
                .tasks
                .iter()
                .filter(|t| {
                    t.region == region
                        && t.state.is_terminal()
                        && t.finalized_at.is_some_and(|at| at < cutoff)
                })
                .map(|t| (t.finalized_at, t.id, t.payload_ref))
                .collect();
            doomed.sort();
            // Nothing else runs under the lock, so every batch but the last
            // is full, as in PostgreSQL without competing transactions.
            for batch in doomed.chunks(size) {
                let ids: HashSet<TaskId> = batch.iter().map(|(_, id, _)| *id).collect();
                let attempts_before = state.attempts.len();
                state.attempts.retain(|a| !ids.contains(&a.task_id));
                let attempts = attempts_before - state.attempts.len();
                let payloads = batch
                    .iter()
                    .filter(|(_, _, payload)| state.payloads.remove(payload).is_some())
                    .count();
                state.tasks.retain(|t| !ids.contains(&t.id));
                report.add_batch(ids.len() as u64, attempts as u64, payloads as u64);
            }
        }
        state.by_id = state
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id, i))
            .collect();
        Ok(report)
    }
}
