//! What a process may ask of its database, as traits every backend
//! implements the same way ([`PgStore`](crate::store::PgStore),
//! [`SqliteStore`](crate::store::SqliteStore), the model
//! [`MemStore`](crate::store::MemStore), and [`Database`](crate::store::Database),
//! which passes each call to the one it runs on), a trait per concept.
//! Each backend implements a trait in the file named like the trait's
//! file here, and the conformance suite holds all of them to one
//! behaviour.
//!
//! # Layout
//! - The runtime's concepts, which [`Store`] (`store`) unites so code
//!   generic over `S: Store` may call any of them:
//!   - `schedule`: [`Schedule`], tasks handed to remit and read back;
//!   - `leases`: [`Leases`], the claim and every end of a lease;
//!   - `destinations`: [`Destinations`], the receivers, their secrets,
//!     pauses, health, an operator's changes and deletion;
//!   - `rates`: [`Rates`], token takes and learned quotas;
//!   - `api_tokens`: [`ApiTokens`], the API's bearer tokens;
//!   - `upkeep`: [`Upkeep`], reconciliation, retention (ended tasks,
//!     destinations' hours, the audit log), the settling of disabled
//!     destinations' tasks, the ping;
//!   - `alerts`: [`Alerts`], the region's check for what a person should
//!     hear about, and the outbox of operational events it writes.
//! - The operator's and the reports' concepts:
//!   - `reports`: [`Reports`], what `remit status`, the gauges, the API
//!     and the console read: status, task searches, destination
//!     summaries and hours, the audit log, replication;
//!   - `changes`: [`Changes`], an operator's cancel, reschedule, erase and
//!     retry-now of tasks already scheduled;
//!   - `jobs`: [`Jobs`], bulk replays and cancels as durable jobs, and
//!     what a job is;
//!   - `transfer`: [`Transfer`], `remit export` and `import`;
//!     `transfer_records`: the records they carry; `transfer_checks`:
//!     what an imported record must be before any store writes it;
//!   - `keys`: [`Keys`], the payload key ring: the check at start (which
//!     keys a database records, and whether a ring may open what it
//!     holds), `remit rekey`.
//! - What the calls carry: `calls`, the values the runtime's calls carry
//!   and return; `status` and `console`: what the reports answer; `error`:
//!   [`StoreError`], what every call may fail with; `clock`: [`Clock`],
//!   the single authority for "now" every store is built with; `stats`:
//!   [`StoreStats`], the counters each keeps; `url`: [`DatabaseUrl`],
//!   which backend a URL names; `wakeup`: [`Wakeup`], what a wake-up says;
//!   `secrets`: a signing secret as a row holds it and an export carries
//!   it; `headers`: a destination's custom header likewise;
//!   `replication`: [`Replication`], whether a commit waits for a
//!   standby; `audit`: [`AuditScope`], what a prune of the audit log
//!   takes; `migration_locks`: how `remit migrate` waits for the locks a
//!   migration takes on a live database.

mod alerts;
mod api_tokens;
mod audit;
mod calls;
mod changes;
mod clock;
pub mod console;
mod destinations;
mod error;
mod headers;
mod jobs;
mod keys;
mod leases;
mod migration_locks;
mod rates;
mod replication;
mod reports;
mod schedule;
mod secrets;
mod stats;
pub(in crate::store) mod status;
mod store;
mod transfer;
mod transfer_checks;
mod transfer_records;
mod upkeep;
mod url;
mod wakeup;

pub use alerts::{AlertCheck, Alerts, AlertsChecked};
pub use api_tokens::ApiTokens;
pub use audit::{AuditScope, MAX_AUDIT_PAGE};
pub use calls::{
    AutoDisabled, ClaimRequest, Finish, Finished, QuotaNote, RateGrant, RateRequest, Replayed,
    ResumePoint, Scheduled, TransitionOutcome,
};
pub use changes::{why_not_moved, Cancel, Changes, Erase, ErasedTenant, Move, Reschedule};
pub use clock::Clock;
pub use destinations::{Deleted, Destinations};
pub use error::{SchemaMismatch, StoreError};
pub use headers::{HeaderRecord, StoredHeader};
pub(crate) use jobs::check_new_job;
pub use jobs::{Job, JobAction, JobFilter, Jobs, NewJob};
pub(in crate::store) use keys::may_record;
pub use keys::{KeyCount, Keys, Rekeyed};
pub use leases::Leases;
pub use migration_locks::{holders_to_text, AfterWait, LockHolder, LockPatience, LockWait};
pub use rates::Rates;
pub use replication::{ReadSource, Replication, Standby};
pub use reports::Reports;
pub use schedule::Schedule;
pub use secrets::{SecretRecord, StoredValue};
pub use stats::StoreStats;
pub use status::{Latency, Refused, RegionCounts, RegionStatus, StatusReport};
pub use store::Store;
pub use transfer::{Imported, Transfer};
pub use transfer_checks::{
    check_imported_destination, check_imported_task, ImportCheck, MAX_IMPORTED_LEASE_TOKEN,
};
pub use transfer_records::{DestinationRecord, TaskRecord};
pub use upkeep::Upkeep;
pub use url::DatabaseUrl;
pub use wakeup::Wakeup;
