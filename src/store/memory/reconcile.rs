//! Reconciliation over the model, mirroring the SQL checks.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{attempt, MemStore};
use crate::domain::{
    AttemptOutcome, AttemptRecord, Finding, Lease, ReconcileReport, ReconcileRequest, Task, TaskId,
    TaskState, TaskSummary,
};

impl MemStore {
    pub(super) fn reconcile_now(&self, request: &ReconcileRequest) -> ReconcileReport {
        let now = self.now();
        let in_region = |t: &Task| request.region.is_none_or(|r| t.region == r);
        let summarize = |tasks: Vec<&Task>| Finding {
            count: tasks.len() as i64,
            tasks: tasks
                .into_iter()
                .take(usize::try_from(request.list_limit).unwrap_or(0))
                .map(|t| TaskSummary {
                    id: t.id,
                    tenant_id: t.tenant_id.clone(),
                    reminder_id: t.reminder_id.clone(),
                    destination_id: t.destination_id.clone(),
                    region: t.region,
                    state: t.state,
                    not_before: t.not_before,
                    available_at: t.available_at,
                    lease_owner: t.lease_owner.clone(),
                    lease_expires_at: t.lease_expires_at,
                    attempt_count: t.attempt_count,
                })
                .collect(),
        };
        let mut state = self.state.lock();
        let mut report = ReconcileReport::default();
        let mut expired: Vec<&Task> = state
            .tasks
            .iter()
            .filter(|t| {
                in_region(t)
                    && t.state == TaskState::Leased
                    && t.lease_expires_at.is_some_and(|at| at <= now)
            })
            .collect();
        expired.sort_by_key(|t| t.lease_expires_at);
        report.expired_leases = summarize(expired);
        let mut old: Vec<&Task> = state
            .tasks
            .iter()
            .filter(|t| {
                in_region(t)
                    && matches!(t.state, TaskState::Pending | TaskState::RetryWait)
                    && t.available_at.max(t.not_before) <= now - request.older_than
            })
            .collect();
        old.sort_by_key(|t| t.available_at.max(t.not_before));
        report.old_eligible = summarize(old);
        let mut past: Vec<&Task> = state
            .tasks
            .iter()
            .filter(|t| in_region(t) && !t.state.is_terminal() && t.retry_horizon_at < now)
            .collect();
        past.sort_by_key(|t| t.retry_horizon_at);
        report.past_horizon = summarize(past);
        let mut terminal: BTreeMap<String, i64> = BTreeMap::new();
        for t in state
            .tasks
            .iter()
            .filter(|t| in_region(t) && t.state.is_terminal())
        {
            *terminal
                .entry(
                    t.failure_reason
                        .clone()
                        .unwrap_or_else(|| "delivered".into()),
                )
                .or_default() += 1;
        }
        report.terminal = terminal.into_iter().collect();
        if let Some(ledger) = request.ledger.as_ref().filter(|l| !l.is_empty()) {
            let known = |tenant: &crate::domain::TenantId, reminder: &crate::domain::ReminderId| {
                ledger
                    .iter()
                    .any(|e| &e.tenant_id == tenant && &e.reminder_id == reminder)
            };
            let mut missing: Vec<_> = ledger
                .iter()
                .filter(|e| {
                    !state
                        .tasks
                        .iter()
                        .any(|t| t.tenant_id == e.tenant_id && t.reminder_id == e.reminder_id)
                })
                .cloned()
                .collect();
            missing.sort_by_key(|e| e.due);
            report.missing_from_schedule = missing;
            let (first, last) = ledger.iter().fold(
                (DateTime::<Utc>::MAX_UTC, DateTime::<Utc>::MIN_UTC),
                |(lo, hi), e| (lo.min(e.due), hi.max(e.due)),
            );
            let mut unknown: Vec<&Task> = state
                .tasks
                .iter()
                .filter(|t| {
                    in_region(t)
                        && t.not_before >= first
                        && t.not_before <= last
                        && !known(&t.tenant_id, &t.reminder_id)
                })
                .collect();
            unknown.sort_by_key(|t| t.not_before);
            report.unknown_to_ledger = summarize(unknown);
        }
        if request.reclaim {
            let expired: Vec<(TaskId, Lease)> = state
                .tasks
                .iter()
                .filter(|t| {
                    in_region(t)
                        && t.state == TaskState::Leased
                        && t.lease_expires_at.is_some_and(|at| at <= now)
                })
                .map(|t| {
                    (
                        t.id,
                        Lease {
                            task_id: t.id,
                            token: t.lease_token.unwrap_or_default(),
                            owner: t.lease_owner.clone().unwrap_or_default(),
                            attempt: t.attempt_count,
                        },
                    )
                })
                .collect();
            for (id, lease) in &expired {
                state.attempts.push(attempt(
                    lease,
                    AttemptOutcome::Abandoned,
                    &AttemptRecord::default(),
                    None,
                    now,
                    lease.attempt,
                ));
                if let Some(task) = state.task_mut(*id) {
                    task.state = TaskState::RetryWait;
                    task.lease_token = None;
                    task.lease_owner = None;
                    task.lease_expires_at = None;
                    task.available_at = now.max(task.not_before);
                    task.updated_at = now;
                }
            }
            report.reclaimed = expired.len() as i64;
        }
        report
    }
}
