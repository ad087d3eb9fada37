//! What every backend applies the same way, written once: the model and
//! SQLite apply these rules to the rows they read, and PostgreSQL's
//! statements take their targets from them.
//!
//! # Layout
//! - `lifecycle`: each transition's rules (the states it leaves, the lease
//!   guard, what it writes and logs, what a repeat or a stale lease gets);
//!   `lapsed`: the same for rows no lease holder will finish (an expired
//!   lease handed back, a disabled destination's rows settled);
//!   `changes`: an operator's cancel, reschedule, erase and retry-now,
//!   and the settling of a change that waited for an attempt;
//! - `claim_turn`: which rows a claim takes (turns over destinations and
//!   their tenants); `ordering`: which keyed rows wait behind an earlier
//!   row of their line; `next_due`: when a claim could next find work;
//! - `bucket`: the shared token bucket, paced by the quota a receiver
//!   announced (`quota`: how that is recorded); `health`: what an ended
//!   attempt does to its destination's failure streak, and the disable it
//!   may tip;
//! - `destination_change`: what an operator's change of a destination
//!   writes (settings, thresholds, URL, header rows);
//! - `requests`: what a destination or task must be before any store
//!   writes it, and what makes a repeat a conflict (an imported record's
//!   checks are the contract's, `contract/transfer_checks`);
//!   `import_conflicts`: what an import meets in
//!   the store (a repeat or a conflict, the fencing tokens to move past);
//! - `alerts`: the alert check's rule (what it announces, how it
//!   coalesces, where its cursors move); `alert_events`: the events it
//!   writes, and what waits for a window;
//! - `audit_entries`: the audit entry each admin action writes, with the
//!   settings before and after (never a secret's value); `audit_rows`: an
//!   entry's columns as every store reads them back; `job_rows`: a
//!   job's likewise;
//! - `findings`: what reconciliation reports;
//! - `rekey`: re-sealing under the newest payload key, in batches;
//! - `columns`: how every store writes states and outcomes, and the error
//!   for a column that holds what no build wrote; `token_rows`: an API
//!   token's columns as every store reads them back;
//! - `schema_version`: whether a database's migrations are the binary's;
//!   `finish_failpoint`: the failpoint inside every store's finish.

pub(in crate::store) mod alert_events;
pub(in crate::store) mod alerts;
pub(in crate::store) mod audit_entries;
pub(in crate::store) mod audit_rows;
pub(in crate::store) mod bucket;
pub(in crate::store) mod changes;
pub(in crate::store) mod claim_turn;
pub(in crate::store) mod columns;
pub(in crate::store) mod destination_change;
pub(in crate::store) mod findings;
pub(in crate::store) mod finish_failpoint;
pub(in crate::store) mod health;
pub(in crate::store) mod import_conflicts;
pub(in crate::store) mod job_rows;
pub(in crate::store) mod lapsed;
pub(in crate::store) mod lifecycle;
pub(in crate::store) mod next_due;
pub(in crate::store) mod ordering;
pub(in crate::store) mod quota;
pub(in crate::store) mod rekey;
pub(in crate::store) mod requests;
pub(in crate::store) mod schema_version;
pub(in crate::store) mod token_rows;

pub use finish_failpoint::{CRASH_EXIT_CODE, IN_FINISH_FAILPOINT};
