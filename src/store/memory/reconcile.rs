//! Reconciliation over the model: the findings of `findings`, then the
//! expired leases handed back by `lifecycle::reclaim`.

use super::{MemStore, State};
use crate::domain::{ReconcileReport, ReconcileRequest};
use crate::store::{findings, lifecycle};

impl MemStore {
    pub(super) fn reconcile_now(&self, request: &ReconcileRequest) -> ReconcileReport {
        let now = self.now();
        let mut state = self.state.lock();
        let mut report = findings::findings(&state.tasks, request, now);
        if request.reclaim {
            let State {
                tasks, attempts, ..
            } = &mut *state;
            for task in tasks.iter_mut().filter(|t| {
                request.region.is_none_or(|r| t.region == r) && lifecycle::lease_expired(t, now)
            }) {
                attempts.push(lifecycle::reclaim(task, now));
                report.reclaimed += 1;
            }
        }
        report
    }
}
