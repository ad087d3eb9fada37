//! What remit's tests share, as one crate that the store's tests
//! (`tests/`) and the runtime's (`actors/tests/`) depend on: a database of
//! their own for each test, a PostgreSQL cluster of their own for the
//! tests that stop, promote or reconfigure one, and PgBouncer in front of
//! a database.
//!
//! # Layout
//! - `db`: a fresh schema or SQLite file per test, removed when it ends,
//!   and the helpers most tests use (a task, a claim, a finish);
//!   `schema_cleanup` how its schemas are stamped, dropped and swept.
//! - `cluster`: a throwaway PostgreSQL cluster (and its standby) started
//!   with `initdb` and `pg_ctl`.
//! - `pgbouncer`: PgBouncer started in front of a database, in
//!   transaction or session mode.
//! - `runtime/` (with the `runtime` feature, for `actors/tests`): a
//!   runtime configured for quick tests, the scriptable receivers and
//!   what the runtime's end-to-end tests wait for.

// Test fixtures: a failure is a panic that fails the test, and no fixture
// is ever printed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_debug_implementations
)]

pub mod cluster;
pub mod db;
pub mod pgbouncer;
#[cfg(feature = "runtime")]
pub mod runtime;
pub mod schema_cleanup;
