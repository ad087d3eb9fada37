//! What a process may ask of its database, as traits every backend
//! implements the same way ([`PgStore`](super::PgStore),
//! [`SqliteStore`](super::SqliteStore), the model
//! [`MemStore`](super::MemStore), and [`Database`](super::Database),
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
//!   - `upkeep`: [`Upkeep`], reconciliation, retention, the settling of
//!     disabled destinations' tasks, the ping;
//!   - `alerts`: [`Alerts`], the region's check for what a person should
//!     hear about, and the outbox of operational events it writes.
//! - The operator's and the reports' concepts:
//!   - `reports`: [`Reports`], what `remit status`, the gauges and the
//!     console read;
//!   - `changes`: [`Changes`], an operator's cancel, reschedule, erase and
//!     retry-now of tasks already scheduled;
//!   - `replay_jobs`: [`ReplayJobs`], bulk replays as durable jobs;
//!   - `audit`: [`Audit`], the audit log of admin actions read a page at
//!     a time and kept to its retention (each admin call writes its own
//!     entry);
//!   - `destination_hours`: [`DestinationHours`], each destination's
//!     health hour by hour, as the finish keeps it;
//!   - `transfer`: [`Transfer`], `remit export` and `import`;
//!     `transfer_records`: the records they carry;
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
//!   standby; `migration_locks`: how `remit migrate` waits for the locks a
//!   migration takes on a live database.

mod alerts;
mod api_tokens;
mod audit;
mod calls;
mod changes;
mod clock;
pub mod console;
mod destination_hours;
mod destinations;
mod error;
mod headers;
mod keys;
mod leases;
mod migration_locks;
mod rates;
mod replay_jobs;
mod replication;
mod reports;
mod schedule;
mod secrets;
mod stats;
pub(in crate::store) mod status;
mod store;
mod transfer;
mod transfer_records;
mod upkeep;
mod url;
mod wakeup;

pub use alerts::{AlertCheck, Alerts, AlertsChecked};
pub use api_tokens::ApiTokens;
pub use audit::{Audit, AuditScope, MAX_AUDIT_PAGE};
pub use calls::{
    AutoDisabled, ClaimRequest, Finish, Finished, QuotaNote, RateGrant, RateRequest, Replayed,
    ResumePoint, Scheduled, TransitionOutcome,
};
pub use changes::{why_not_moved, Cancel, Changes, Erase, ErasedTenant, Move, Reschedule};
pub use clock::Clock;
pub use destination_hours::DestinationHours;
pub use destinations::{Deleted, Destinations};
pub use error::{SchemaMismatch, StoreError};
pub use headers::{HeaderRecord, StoredHeader};
pub(in crate::store) use keys::may_record;
pub use keys::Keys;
pub use leases::Leases;
pub use migration_locks::{holders_to_text, AfterWait, LockHolder, LockPatience, LockWait};
pub use rates::Rates;
pub use replay_jobs::ReplayJobs;
pub use replication::{ReadSource, Replication, Standby};
pub use reports::Reports;
pub use schedule::Schedule;
pub use secrets::{SecretRecord, StoredValue};
pub use stats::StoreStats;
pub use status::{Latency, Refused, RegionCounts, RegionStatus, StatusReport};
pub use store::Store;
pub use transfer::{Imported, Transfer};
pub use transfer_records::{DestinationRecord, TaskRecord};
pub use upkeep::Upkeep;
pub use url::DatabaseUrl;
pub use wakeup::Wakeup;
