//! The audit log in the model: a list under the state's lock, so an entry
//! is appended in the same critical section as the action it records, and
//! an action that is refused appends none.

use chrono::{DateTime, Duration, SubsecRound, Utc};

use super::state::State;
use super::store::MemStore;
use crate::domain::{Actor, AuditEntry, AuditFilter, AuditPage, NewAuditEntry};
use crate::store::contract::StoreError;

impl State {
    /// Appends `entry` as `actor` did it at `now`.
    pub(super) fn record_audit(&mut self, actor: &Actor, now: DateTime<Utc>, entry: NewAuditEntry) {
        self.next_audit_id += 1;
        self.audit.push(AuditEntry {
            id: self.next_audit_id,
            // Instants as PostgreSQL keeps them: to the microsecond.
            at: now.trunc_subsecs(6),
            actor: actor.clone(),
            action: entry.action,
            target: entry.target,
            region: entry.region,
            before: entry.before,
            after: entry.after,
        });
    }
}

impl MemStore {
    /// The same model whose admin calls record `actor` in the audit log.
    pub fn acting_as(&self, actor: Actor) -> Self {
        Self {
            actor,
            ..self.clone()
        }
    }

    /// Appends `entry` for this handle's actor, now; for an admin call that
    /// holds the state's lock while it acts.
    pub(super) fn audit_in(&self, state: &mut State, entry: NewAuditEntry) {
        state.record_audit(&self.actor, self.now(), entry);
    }
}

impl MemStore {
    pub(in crate::store) async fn read_audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        let state = self.state.lock();
        let rows = state
            .audit
            .iter()
            .rev()
            .filter(|e| before.is_none_or(|b| e.id < b) && filter.admits(e))
            .take(limit as usize + 1)
            .cloned()
            .collect();
        Ok(AuditPage::of(rows, limit))
    }

    pub(in crate::store) async fn prune_audit_log(
        &self,
        scope: crate::store::contract::AuditScope,
        older_than: Duration,
        _batch_size: u32,
    ) -> Result<u64, StoreError> {
        let cutoff = self.now() - older_than;
        let mut state = self.state.lock();
        let before = state.audit.len();
        state
            .audit
            .retain(|e| e.at >= cutoff || !scope.admits(e.region));
        let deleted = (before - state.audit.len()) as u64;
        if deleted > 0 {
            let entry = crate::store::rules::audit_entries::audit_pruned(scope, cutoff, deleted);
            self.audit_in(&mut state, entry);
        }
        Ok(deleted)
    }
}
