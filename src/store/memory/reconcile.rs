//! Reconciliation over the model: the findings of `findings`, with the
//! expired leases handed back by `lapsed::reclaim` when asked.

use super::store::MemStore;

use super::state::State;
use crate::domain::{ReconcileReport, ReconcileRequest};
use crate::store::{rules::findings, rules::lapsed};

impl MemStore {
    pub(super) fn reconcile_now(&self, request: &ReconcileRequest) -> ReconcileReport {
        let now = self.now();
        let mut state = self.state.lock();
        if !request.reclaim {
            return findings::findings(&state.tasks, request, now);
        }
        // As PostgreSQL: the expired leases as found, then the hand-back,
        // then everything else as it stands after it.
        let expired_leases = findings::findings(&state.tasks, request, now).expired_leases;
        let mut reclaimed = 0;
        let State {
            tasks, attempts, ..
        } = &mut *state;
        for task in tasks.iter_mut().filter(|t| {
            request.region.is_none_or(|r| t.region == r) && lapsed::lease_expired(t, now)
        }) {
            attempts.push(lapsed::reclaim(task, now));
            reclaimed += 1;
        }
        ReconcileReport {
            expired_leases,
            reclaimed,
            ..findings::findings(tasks, request, now)
        }
    }
}
