//! What a process may ask of its database, as traits every backend
//! implements the same way ([`PgStore`](super::PgStore),
//! [`SqliteStore`](super::SqliteStore), and [`Database`](super::Database),
//! which passes each call to the one it runs on), grouped by who asks.
//!
//! # Layout
//! - `store`: [`Store`], the runtime's calls (schedule, claim, finish,
//!   destinations, tokens), each one short transaction; the model
//!   ([`MemStore`](super::MemStore)) implements it too, and every trait
//!   below besides, and the conformance suite holds all three to one
//!   behaviour;
//! - `reports`: [`Reports`], what `remit status`, the gauges and the
//!   console read;
//! - `transfer`: [`Transfer`], `remit export` and `import`;
//! - `keys`: [`Keys`], the payload key ring: the check at start (which
//!   keys a database records, and whether a ring may open what it
//!   holds), `remit rekey`;
//! - `replay_jobs`: [`ReplayJobs`], bulk replays as durable jobs;
//! - `changes`: [`Changes`], an operator's cancel, reschedule, erase and
//!   retry-now of tasks already scheduled;
//! - `destinations`: [`Destinations`], an operator's change of a
//!   destination's URL and settings, and its deletion;
//! - `alerts`: [`Alerts`], the region's check for what a person should
//!   hear about, written to the outbox of operational events;
//! - `audit`: [`Audit`], the audit log of admin actions read a page at a
//!   time and kept to its retention (each admin call of the traits above
//!   writes its own entry);
//! - `destination_hours`: [`DestinationHours`], each destination's health
//!   hour by hour, as the finish keeps it;
//! - `calls`: the values the runtime's calls carry and return; `status`
//!   and `console`: what the reports answer; `error`: [`StoreError`], what
//!   every call may fail with; `clock`: [`Clock`], the single authority
//!   for "now" every store is built with; `stats`: [`StoreStats`], the
//!   counters each keeps; `url`: [`DatabaseUrl`], which backend a URL
//!   names; `wakeup`: [`Wakeup`], what a wake-up says; `secrets`: a
//!   signing secret as a row holds it and an export carries it;
//!   `headers`: a destination's custom header likewise; `replication`:
//!   [`Replication`], whether a commit waits for a standby;
//!   `migration_locks`: how `remit migrate` waits for the locks a
//!   migration takes on a live database.

mod alerts;
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
mod migration_locks;
mod replay_jobs;
mod replication;
mod reports;
mod secrets;
mod stats;
pub(in crate::store) mod status;
mod store;
mod transfer;
mod url;
mod wakeup;

pub use alerts::{AlertCheck, Alerts, AlertsChecked};
pub use audit::{Audit, AuditScope, MAX_AUDIT_PAGE};
pub use calls::{
    AutoDisabled, ClaimRequest, Finish, Finished, QuotaNote, Replayed, ResumePoint, Scheduled,
    TokenRequest, Tokens, TransitionOutcome,
};
pub use changes::{why_not_moved, Cancel, Changes, Erase, ErasedTenant, Move, Reschedule};
pub use clock::Clock;
pub use destination_hours::DestinationHours;
pub use destinations::{Deleted, Destinations};
pub use error::{SchemaMismatch, StoreError};
pub use headers::{HeaderRecord, StoredHeader};
pub(in crate::store) use keys::may_record;
pub use keys::Keys;
pub use migration_locks::{holders_to_text, AfterWait, LockHolder, LockPatience, LockWait};
pub use replay_jobs::ReplayJobs;
pub use replication::{ReadSource, Replication, Standby};
pub use reports::Reports;
pub use secrets::{SecretRecord, StoredValue};
pub use stats::StoreStats;
pub use status::{Latency, Refused, RegionCounts, RegionStatus, StatusReport};
pub use store::Store;
pub use transfer::{DestinationRecord, Imported, TaskRecord, Transfer};
pub use url::DatabaseUrl;
pub use wakeup::Wakeup;
