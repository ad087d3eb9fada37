//! `Database`: the store a process runs on, chosen by its URL. The runtime,
//! the API and the CLI hold a `Database` and never name a backend:
//! - `postgres://…` (or `postgresql://…`): `PgStore`, for production
//!   (several hosts, throughput, point-in-time backups);
//! - `sqlite://PATH`: `SqliteStore`, one file, nothing to install.
//!
//! # Layout
//! - `setup`: how to reach the database ([`DatabaseConfig`]) and its
//!   migrations; `handle`: [`Database`] itself, connected by its URL.
//! - `contract`: every trait of the contract on `Database`, each call
//!   passed to the backend in one line (`on_store!`);
//! - `audit`: who a handle acts as ([`Database::acting_as`]);
//! - `report_reader`: [`ReportReader`], the handle the reports read
//!   through (a replica's, or the primary's), which cannot write;
//! - `notify`: [`Wakeups`], the wake-ups a process hears (LISTEN/NOTIFY on
//!   PostgreSQL, the in-process broadcast on SQLite);
//! - `sandbox`: [`Sandbox`], a throwaway database of remit's own (a SQLite
//!   file in a temporary directory, or a schema inside a PostgreSQL);
//! - `replication`: the database's replication as `remit status` shows
//!   it.

mod audit;
mod contract;
mod handle;
mod notify;
mod replication;
mod report_reader;
mod sandbox;
mod setup;

pub use handle::Database;
pub use notify::Wakeups;
pub use report_reader::ReportReader;
pub use sandbox::{create_schema, drop_schema, Sandbox};
pub use setup::{migrate, migrate_patiently, DatabaseConfig, DEFAULT_DATABASE_URL};
