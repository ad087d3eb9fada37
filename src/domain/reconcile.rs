//! What a reconciliation pass found: the signals that show a stuck
//! partition or a reminder that never made it into the schedule.

use chrono::{DateTime, Utc};

use super::ids::DestinationId;
use super::ids::Region;
use super::ids::ReminderId;
use super::ids::TaskId;
use super::ids::TenantId;
use super::task::TaskState;

/// One task named in a report (no payload, ever).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedTask {
    pub id: TaskId,
    pub tenant_id: TenantId,
    pub reminder_id: ReminderId,
    pub destination_id: DestinationId,
    pub region: Region,
    pub state: TaskState,
    pub not_before: DateTime<Utc>,
    pub available_at: DateTime<Utc>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub attempt_count: i32,
}

/// A reminder the source of truth expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub tenant_id: TenantId,
    pub reminder_id: ReminderId,
    pub due: DateTime<Utc>,
}

/// What to look for.
#[derive(Debug, Clone)]
pub struct ReconcileRequest {
    /// One region, or every region.
    pub region: Option<Region>,
    /// Eligible work waiting longer than this is reported.
    pub older_than: chrono::Duration,
    /// Hand expired leases back (due at once, the lost attempt logged).
    pub reclaim: bool,
    /// Compare with the source of truth's list of expected reminders.
    pub ledger: Option<Vec<LedgerEntry>>,
    /// Most tasks listed per finding; counts are always complete.
    pub list_limit: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finding {
    pub count: i64,
    /// Up to the request's list limit, oldest first.
    pub tasks: Vec<ReportedTask>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    pub expired_leases: Finding,
    /// How many expired leases this pass handed back.
    pub reclaimed: i64,
    pub old_eligible: Finding,
    /// Not terminal although no retry may start any more.
    pub past_horizon: Finding,
    /// Terminal tasks by outcome: `delivered`, `cancelled` or the failure
    /// reason.
    pub terminal: Vec<(String, i64)>,
    /// Ledger entries with no task.
    pub missing_from_schedule: Vec<LedgerEntry>,
    /// Tasks due within the ledger's time span that it does not list.
    pub unknown_to_ledger: Finding,
}

impl ReconcileReport {
    /// True when nothing needs a person's attention. Terminal counts are
    /// information, not findings.
    pub fn is_clean(&self) -> bool {
        self.expired_leases.count == 0
            && self.old_eligible.count == 0
            && self.past_horizon.count == 0
            && self.missing_from_schedule.is_empty()
            && self.unknown_to_ledger.count == 0
    }
}
