//! The durable schedule. The only module that names diesel.
//!
//! # Layout
//! The contract at the bottom, the shared rules on it, the three backends
//! on both, and the dispatch by URL on top; nothing imports upward.
//!
//! ```text
//! src/store/
//! ├── mod.rs       this layout, and what the store exports
//! ├── contract/    the traits every backend implements, and the types they speak
//! ├── rules/       what every backend applies the same way, written once
//! ├── postgres/    PgStore: every statement PostgreSQL runs
//! ├── sqlite/      SqliteStore: the embedded file
//! ├── memory/      MemStore: the model the simulation explores
//! └── database/    Database: the backend a process runs on, by URL
//! ```
//!
//! - `contract`: [`Store`] (the runtime's calls, each one short
//!   transaction, most one statement, that never waits on anything but
//!   SQL; a one-item call is its batch call with one item), [`Reports`],
//!   [`Transfer`], [`Keys`], [`Jobs`], [`Changes`] and [`Alerts`], and the
//!   values, reports, records, errors, clock and wake-ups they carry. Its own Layout says
//!   which file holds what.
//! - `rules`: each transition's rules, the claim's turns and lines, the
//!   token bucket, the failure streak, what a request or an imported record
//!   must be, what reconciliation reports. The model and SQLite apply them
//!   to rows they read; PostgreSQL's statements take their targets from
//!   them.
//! - `postgres`: [`PgStore`] over a bb8 pool, with its connections, TLS,
//!   SQL, diesel schema and migrations (its own Layout says which file
//!   holds what).
//! - `sqlite`: [`SqliteStore`], one file, one connection per process, each
//!   write a `BEGIN IMMEDIATE` transaction.
//! - `memory`: [`MemStore`], the same behaviour as a model in memory, for
//!   the simulation; the conformance suite holds all three to one
//!   behaviour.
//! - `database`: [`Database`], chosen by its URL (`postgres://…` or
//!   `sqlite://PATH`), which implements each trait by passing every call to
//!   its backend in one line; the wake-ups a process hears ([`Wakeups`]);
//!   throwaway databases ([`Sandbox`]). Nothing outside `store` names a
//!   backend.
//!
//! # Transactions and dropped futures
//! A caller may drop a store call's future halfway (shutdown, a deadline).
//! Dropped inside an explicit transaction, its pooled connection would sit
//! "idle in transaction", holding its row locks until the connection
//! closes: diesel-async counts such a connection as broken and never hands
//! it out again, but the server rolls back only once the socket is gone.
//! So the hot calls are one statement each, which PostgreSQL commits or
//! rolls back on its own: the claim, the token take (`postgres/rates/rate`,
//! which turns off the commit's flush for itself with
//! `set_config(…, true)`), a finish batch without pauses, the hand-back and the
//! other single-row transitions.
//! The explicit transactions left are short and wait on nothing but SQL:
//! a finish batch with pauses (`postgres/leases/finish_many`: the pauses
//! and the attempts must commit together); `schedule_many` (a payload and
//! its task together); `postgres/transfer`'s import (all or nothing);
//! `postgres/keys/payload_keys`' record (once at start); a destination's
//! registration with its secret, and a rotation
//! (`postgres/destinations/secrets`, which holds the destination's row); a
//! rekey batch (`postgres/keys/rekey`, which
//! locks only the rows it rewrites);
//! `postgres/reports/status`'s read-only snapshot (no locks); the alert
//! check (`postgres/alerts`: bounded reads and small writes under a tried
//! advisory lock of the region);
//! every admin call (a token made or revoked, a destination registered,
//! disabled, enabled or rotated, a replay, an operator's change, a bulk
//! job, an import, a rekey's end), which writes its audit entry
//! (`postgres/audit`) in the transaction of its action;
//! and, with failpoints compiled in, the finish (so a test can fail it
//! before its commit). On SQLite the hazard does not arise: each operation
//! runs whole on a blocking thread, whatever becomes of its future, and a
//! panic inside it rolls back through a fresh connection.
//!
//! Every statement that locks several destination rows (token takes, a
//! batch of pauses) locks them in id order, so two of them never deadlock.

mod contract;
mod database;
mod memory;
mod postgres;
mod rules;
mod sqlite;

pub use contract::console;
pub use contract::{
    check_imported_destination, check_imported_task, ImportCheck, KeyCount, Rekeyed,
    MAX_IMPORTED_LEASE_TOKEN,
};
pub use contract::{
    why_not_moved, AfterWait, AlertCheck, Alerts, AlertsChecked, ApiTokens, AuditScope, Cancel,
    Changes, Erase, ErasedTenant, Leases, LockHolder, LockPatience, LockWait, Move, Rates,
    Reschedule, Schedule, Upkeep, MAX_AUDIT_PAGE,
};
pub use contract::{
    AutoDisabled, Clock, DatabaseUrl, SchemaMismatch, SecretRecord, StoreStats, StoredValue, Wakeup,
};
pub use contract::{
    ClaimRequest, DestinationRecord, Finish, Finished, Imported, Jobs, Keys, Latency, QuotaNote,
    RateGrant, RateRequest, Refused, RegionCounts, RegionStatus, Replayed, Reports, ResumePoint,
    Scheduled, StatusReport, Store, StoreError, TaskRecord, Transfer, TransitionOutcome,
};
pub use contract::{
    Deleted, Destinations, HeaderRecord, Job, JobAction, JobFilter, NewJob, ReadSource,
    Replication, Standby, StoredHeader,
};
pub use database::{
    create_schema, drop_schema, migrate, migrate_patiently, Database, DatabaseConfig, ReportReader,
    Sandbox, Wakeups, DEFAULT_DATABASE_URL,
};
pub use memory::MemStore;
/// The alert check's PostgreSQL walks, for the test that checks their
/// plans.
#[doc(hidden)]
pub use postgres::alerts_sql;
/// The console's PostgreSQL statements, for the test that checks their
/// plans.
#[doc(hidden)]
pub use postgres::console_sql;
/// The statements of a delivery's path, for the test that checks their
/// plans.
#[doc(hidden)]
pub use postgres::{hot_path_sql, status_sql};
pub use postgres::{
    ConnectFailure, PgConfig, PgConnector, PgStore, Pooler, PoolerError, SslMode, TlsFailure,
    TlsSettingsError,
};
pub use rules::{CRASH_EXIT_CODE, IN_FINISH_FAILPOINT};
pub use sqlite::SqliteStore;
