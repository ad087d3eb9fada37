//! `SqliteStore`: the schedule in one SQLite file, for a machine without a
//! database server and for small deployments (one process per region on
//! one host).
//!
//! Every operation runs on a blocking thread over the process's one
//! connection. Each write is a `BEGIN IMMEDIATE` transaction, which takes
//! SQLite's write lock before it reads: a transaction reads the rows it
//! will change, applies the rules of `lifecycle` to them and writes them
//! back, and no other process's write can come between. So several
//! processes on one file stay correct (their claims are serialized), and
//! the lease-token guard is exactly the one the other stores apply. The
//! file is in WAL mode, so readers never wait for the writer.
//!
//! Wake-ups travel inside the process only (SQLite has no LISTEN): another
//! process on the same file finds new work by polling, and reads a
//! destination's pause from its row before each request.
//!
//! # Layout
//! - `store`: `SqliteStore`, its one connection behind a lock, and what
//!   each operation runs with (`Ctx`).
//! - `connection`: opening the file and migrating it.
//! - Each trait of the contract in the file named like its contract
//!   file, each call one transaction on the connection's thread:
//!   `schedule`, `leases`, `destinations`, `rates`, `api_tokens`,
//!   `upkeep`, `alerts`, `changes`, `reports`, `jobs`, `transfer`,
//!   `keys`.
//! - `rows`: the tables as rows (instants are INTEGER microseconds);
//!   `attempt_rows` and `payload_rows`: the attempt log's and the
//!   payloads' rows.
//! - The statements those call, a file per group: `claim`; `finish` (the
//!   guarded transitions); `next_due`; `rate` (token takes);
//!   `destination_rows` (register, pause, health, the events outbox),
//!   `destination_changes` (an operator's change, a deletion), `headers`
//!   (custom header rows), `secrets`, `refusals` (destinations an address
//!   policy refuses); `maintenance` (reconciliation and retention).
//! - `status` and `console`: the reports' reads; `audit`: the audit log
//!   (entries written, pages, retention); `destination_stats`: each
//!   destination's hours (counted, read, pruned).
//! - `payload_keys`: the keys the payloads are sealed with; `rekey`:
//!   re-sealing under the newest.

mod alerts;
mod api_tokens;
mod attempt_rows;
pub(in crate::store) mod audit;
mod changes;
mod claim;
mod connection;
mod console;
mod destination_changes;
mod destination_rows;
mod destination_stats;
mod destinations;
mod finish;
mod headers;
mod jobs;
mod keys;
mod leases;
mod maintenance;
mod next_due;
mod payload_keys;
mod payload_rows;
mod rate;
mod rates;
mod refusals;
mod rekey;
mod reports;
mod rows;
mod schedule;
mod secrets;
mod status;
mod store;
mod transfer;
mod upkeep;

pub(super) use connection::{check_schema, migrate};
pub use store::SqliteStore;
