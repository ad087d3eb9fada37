//! The durable schedule. The only module that names diesel.
//!
//! # Layout
//! The root holds what every store shares; each backend has a folder.
//!
//! ```text
//! src/store/
//! ├── mod.rs          this layout, and what the store exports
//! ├── operations.rs   the Store trait
//! ├── calls.rs        the values its calls carry and return
//! ├── database/       Database: the store a process runs on, by URL
//! │   ├── url.rs          which backend a URL names
//! │   ├── store.rs        the Store trait, passed to the backend
//! │   └── extras.rs       status, export/import, refusals, key check
//! ├── lifecycle.rs    each transition's rules, written once
//! ├── lapsed.rs       rows no lease holder will finish: reclaim, disabled
//! ├── bucket.rs  quota.rs  claim_turn.rs  findings.rs  rules.rs  import_rules.rs
//! ├── ordering.rs     which keyed rows wait in their line
//! ├── columns.rs      state and outcome labels, corrupt-column errors
//! ├── status.rs  transfer.rs     the reports' and records' types
//! ├── notify.rs  payload_keys.rs  schema_version.rs  sandbox.rs
//! ├── secrets.rs      signing secrets sealed at rest
//! ├── rekey.rs        re-sealing under the newest payload key
//! ├── token_rows.rs   API tokens as every store keeps them
//! ├── clock.rs  error.rs  stats.rs
//! ├── postgres/       PgStore: every statement PostgreSQL runs
//! ├── sqlite/         SqliteStore: the embedded file
//! └── memory/         MemStore: the model the simulation explores
//! ```
//!
//! - [`Store`]: the operations the runtime may perform, each one short
//!   transaction (most are one statement) that never waits on anything but
//!   SQL. A one-item call is its batch call with one item.
//! - `database`: [`Database`], chosen by its URL (`postgres://…` or
//!   `sqlite://PATH`); nothing outside `store` names a backend, and the
//!   shared files never call one: every call beside the trait (status,
//!   export and import, refusals, the payload key) is passed to the
//!   backend in `database/extras.rs`, so backends import the shared types
//!   and nothing imports back.
//! - `postgres`: [`PgStore`] over a bb8 pool, with its connections, TLS,
//!   SQL, diesel schema and migrations (its own Layout says which file
//!   holds what).
//! - `sqlite`: [`SqliteStore`], one file, one connection per process, each
//!   write a `BEGIN IMMEDIATE` transaction.
//! - `memory`: [`MemStore`], the same behaviour as a model in memory, for
//!   the simulation; the conformance suite holds all three to one
//!   behaviour.
//! - `health`: what an ended attempt does to its destination's failure
//!   streak, and the disable it may tip (`policy::health` holds the rule);
//! - `lifecycle`: each transition's rules, written once (the states it
//!   leaves, the lease guard, what it writes and logs, what a repeat or a
//!   stale lease gets); `lapsed`: the same for rows no lease holder will
//!   finish (an expired lease handed back, a disabled destination's rows
//!   settled); `bucket`: the shared token bucket, paced by the
//!   quota a receiver announced (`quota`: how that is recorded);
//!   `claim_turn`: which rows a claim takes (turns over destinations and
//!   their tenants); `ordering`: which keyed rows wait behind an earlier row
//!   of their line; `findings`: what reconciliation reports;
//!   `rules`: what a destination or task must be before any store writes
//!   it; `import_rules`: the same for an imported record. The model and
//!   SQLite apply them to rows they read; PostgreSQL's statements take
//!   their targets from them.
//! - `columns`: how every store writes states and outcomes, and the error
//!   for a column that holds what no build wrote.
//! - `status`, `transfer`: the types `remit status` and `remit export` /
//!   `import` carry; each backend fills them.
//! - `rekey`: re-sealing under the newest payload key, in batches.
//! - `secrets`: signing secrets at rest, sealed with the payload key, and
//!   their exported form.
//! - `notify`: the wake-ups a claimer and a sender hear (LISTEN/NOTIFY on
//!   PostgreSQL, a broadcast inside the process on SQLite).
//! - `payload_keys`: whether the configured ring of keys holds every key
//!   the database's payloads and secrets are sealed with; `schema_version`: whether a database's
//!   migrations are the binary's.
//! - `sandbox`: a throwaway database of remit's own (a SQLite file in a
//!   temporary directory, or a schema inside a PostgreSQL).
//! - `token_rows`: an API token's columns as every store reads them back.
//! - `clock`: the single authority for "now"; `error`: [`StoreError`];
//!   `stats`: counters of claims, reclaims and fenced finishes;
//!   `finish_failpoint`: the failpoint inside every store's finish.
//!
//! # Transactions and dropped futures
//! A caller may drop a store call's future halfway (shutdown, a deadline).
//! Dropped inside an explicit transaction, its pooled connection would sit
//! "idle in transaction", holding its row locks until the connection
//! closes: diesel-async counts such a connection as broken and never hands
//! it out again, but the server rolls back only once the socket is gone.
//! So the hot calls are one statement each, which PostgreSQL commits or
//! rolls back on its own: the claim, the token take (`postgres/rate`,
//! which turns off the commit's flush for itself with
//! `set_config(…, true)`), a finish batch without pauses, release and the
//! other single-row transitions.
//! The explicit transactions left are short and wait on nothing but SQL:
//! a finish batch with pauses (`postgres/finish_many`: the pauses and the
//! attempts must commit together); `schedule_many` (a payload and its task
//! together); `postgres/transfer`'s import (all or nothing);
//! `postgres/payload_keys`' record (once at start); a destination's
//! registration with its secret, and a rotation (`postgres/secrets`, which
//! holds the destination's row); a rekey batch (`postgres/rekey`, which
//! locks only the rows it rewrites);
//! `postgres/status`'s read-only snapshot (no locks);
//! and, with failpoints compiled in, the finish (so a test can fail it
//! before its commit). On SQLite the hazard does not arise: each operation
//! runs whole on a blocking thread, whatever becomes of its future, and a
//! panic inside it rolls back through a fresh connection.
//!
//! Every statement that locks several destination rows (token takes, a
//! batch of pauses) locks them in id order, so two of them never deadlock.

mod bucket;
mod claim_turn;
mod clock;
mod columns;
pub mod console;
mod contract;
mod database;
mod error;
mod findings;
mod finish_failpoint;
mod health;
mod import_rules;
mod lapsed;
mod lifecycle;
mod memory;
mod next_due;
mod notify;
mod ordering;
mod payload_keys;
mod postgres;
mod quota;
mod rekey;
mod rules;
mod sandbox;
mod schema_version;
mod secrets;
mod sqlite;
mod stats;
mod status;
mod token_rows;

pub use clock::Clock;
pub use contract::{
    ClaimRequest, Finish, Finished, Keys, QuotaNote, ReplayJobs, Replayed, Reports, ResumePoint,
    Scheduled, Store, TokenRequest, Tokens, Transfer, TransitionOutcome,
};
pub use contract::{DestinationRecord, Imported, TaskRecord};
pub use database::{migrate, Database, DatabaseConfig, DatabaseUrl, DEFAULT_DATABASE_URL};
pub use error::StoreError;
pub use finish_failpoint::{CRASH_EXIT_CODE, IN_FINISH_FAILPOINT};
pub use health::AutoDisabled;
pub use import_rules::{
    check_imported_destination, check_imported_task, ImportCheck, MAX_IMPORTED_LEASE_TOKEN,
};
pub use memory::MemStore;
pub use notify::{Wakeup, Wakeups};
/// The console's PostgreSQL statements, for the test that checks their
/// plans.
#[doc(hidden)]
pub use postgres::console_sql;
/// The statements of a delivery's path, for the test that checks their
/// plans.
#[doc(hidden)]
pub use postgres::hot_path_sql;
pub use postgres::status_sql;
pub use postgres::{
    ConnectFailure, PgConfig, PgConnector, PgStore, SslMode, TlsFailure, TlsSettingsError,
};
pub use rekey::{KeyCount, Rekeyed};
pub use sandbox::{create_schema, drop_schema, Sandbox};
pub use schema_version::SchemaMismatch;
pub use secrets::{SecretRecord, StoredValue};
pub use sqlite::SqliteStore;
pub use stats::StoreStats;
pub use status::{Latency, Refused, RegionCounts, RegionStatus, StatusReport};
