//! What reconciliation reports, written once: the in-memory model and the
//! SQLite store compute the findings over the rows they read with this
//! function; PostgreSQL's queries (`reconcile.rs`) ask the same questions
//! in SQL.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::domain::{Finding, ReconcileReport, ReconcileRequest, ReportedTask, Task, TaskState};
use crate::store::rules::lapsed;

/// The report's findings over `tasks` (every task the request can see;
/// with a ledger, every task of every region, since a ledger's reminder
/// may have been scheduled anywhere). Reclaiming is the caller's.
pub(in crate::store) fn findings(
    tasks: &[Task],
    request: &ReconcileRequest,
    now: DateTime<Utc>,
) -> ReconcileReport {
    let waited_since = now
        .checked_sub_signed(request.older_than)
        .unwrap_or(DateTime::<Utc>::MIN_UTC);
    let in_region = |t: &Task| request.region.is_none_or(|r| t.region == r);
    let summarize = |tasks: Vec<&Task>| Finding {
        count: tasks.len() as i64,
        tasks: tasks
            .into_iter()
            .take(usize::try_from(request.list_limit).unwrap_or(0))
            .map(|t| ReportedTask {
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
    let mut report = ReconcileReport::default();
    let mut expired: Vec<&Task> = tasks
        .iter()
        .filter(|t| in_region(t) && lapsed::lease_expired(t, now))
        .collect();
    expired.sort_by_key(|t| t.lease_expires_at);
    report.expired_leases = summarize(expired);
    let mut old: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            in_region(t)
                && matches!(t.state, TaskState::Pending | TaskState::RetryWait)
                && t.available_at.max(t.not_before) <= waited_since
        })
        .collect();
    old.sort_by_key(|t| t.available_at.max(t.not_before));
    report.old_eligible = summarize(old);
    let mut past: Vec<&Task> = tasks
        .iter()
        .filter(|t| in_region(t) && !t.state.is_terminal() && t.retry_horizon_at < now)
        .collect();
    past.sort_by_key(|t| t.retry_horizon_at);
    report.past_horizon = summarize(past);
    let mut terminal: BTreeMap<String, i64> = BTreeMap::new();
    for t in tasks
        .iter()
        .filter(|t| in_region(t) && t.state.is_terminal())
    {
        *terminal
            .entry(
                // A failed task's reason, else `delivered` or `cancelled`.
                t.failure_reason
                    .clone()
                    .unwrap_or_else(|| t.state.as_str().into()),
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
                !tasks
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
        let mut unknown: Vec<&Task> = tasks
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
    report
}
