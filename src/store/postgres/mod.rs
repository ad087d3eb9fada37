//! The PostgreSQL store: [`PgStore`] over a bb8 pool of diesel-async
//! connections, and everything that speaks PostgreSQL's SQL. The rules
//! these statements carry out are the store root's (`lifecycle`,
//! `claim_turn`, `rules`, …): the files here say how PostgreSQL applies
//! them, in as few statements as it can.
//!
//! # Layout
//! - `store`: [`PgStore`] and its pool; `read_replica`: one opened on a
//!   replica, for the reports; `store_now`: the store's now
//!   inside a transaction (pinned in tests).
//! - `connection/`: everything between `PgStore` and the server
//!   (connecting, TLS, the pooler, prepared statements, migrations and
//!   the schema check, LISTEN/NOTIFY, replication).
//! - `tables/`: diesel's view of the tables, the enum types, and the
//!   conversion of rows into domain types.
//! - Each trait of the contract in the file or folder named like its
//!   contract file; a folder's `mod.rs` holds the trait's impl, one line
//!   per call into the files beside it that hold the statements, which
//!   never import it back:
//!   - `schedule/`, `leases/`, `destinations/`, `rates/`, `upkeep/` (its
//!     settling of disabled destinations in place), `alerts/` (the check
//!     in place, one transaction under an advisory lock), `reports/`,
//!     `keys/`;
//!   - `api_tokens`, `changes` (an operator's cancel, reschedule, erase
//!     and retry-now), `jobs`, `transfer`, with their statements in
//!     place.
//! - What several of those call: `audit` (an admin action's entry,
//!   written in its transaction; the pages `reports/` reads; the
//!   retention `upkeep/` keeps), `destination_stats` (each destination's
//!   stats by the hour: `finish_many` counts it, `reports/` reads it,
//!   `upkeep/` prunes it); `shared_sql`: the SQL fragments several
//!   statements share.
//! - `hot_path_sql`: the hot statements' text named for the test that
//!   plans them.

// First, so that the statements after it may use its fragments.
#[macro_use]
mod shared_sql;

mod api_tokens;
pub(in crate::store) mod audit;
mod changes;
mod connection;
mod tables;
#[macro_use]
mod destination_stats;
mod alerts;
mod destinations;
pub mod hot_path_sql;
mod jobs;
mod keys;
mod leases;
mod rates;
mod read_replica;
mod reports;
mod schedule;
mod store;
mod store_now;
mod transfer;
mod upkeep;

pub use alerts::alerts_sql;

pub use reports::{console_sql, status_sql};

pub(super) use connection::migrate;

pub use connection::connect::PgConnector;
pub use connection::connect_failure::{ConnectFailure, PoolerError, TlsFailure};
pub(super) use connection::notify::Listener;
pub use connection::pooler::Pooler;
pub use connection::tls::{SslMode, TlsSettingsError};
pub use store::{PgConfig, PgStore};
