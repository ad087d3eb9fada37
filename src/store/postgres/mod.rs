//! The PostgreSQL store: [`PgStore`] over a bb8 pool of diesel-async
//! connections, and everything that speaks PostgreSQL's SQL. The rules
//! these statements carry out are the store root's (`lifecycle`,
//! `claim_turn`, `rules`, …): the files here say how PostgreSQL applies
//! them, in as few statements as it can.
//!
//! # Layout
//! - `store`: [`PgStore`] and its pool; `store_now`: the store's now
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
//!     and retry-now), `audit` (an admin action's entry, written in its
//!     transaction; pages; retention), `destination_hours` (each
//!     destination's health by the hour; `finish_many` writes it),
//!     `replay_jobs`, `transfer`, with their statements in place.
//! - `hot_path_sql`: the hot statements' text named for the test that
//!   plans them.

/// What a replay writes on a failed row (`t`), beside a `clock` CTE: the
/// one-task replay and the bulk replay's batches share it, so they follow
/// the same rule. `$horizon` is the parameter holding the fresh horizon in
/// milliseconds.
macro_rules! replay_set {
    ($horizon:literal) => {
        concat!(
            "SET state = 'pending',
    available_at = GREATEST(clock.now, t.not_before),
    retry_horizon_at = GREATEST(clock.now, t.not_before) + ",
            $horizon,
            " * interval '1 millisecond',
    attempts_before_replay = t.attempt_count,
    failure_reason = NULL,
    finalized_at = NULL,
    updated_at = clock.now"
        )
    };
}

/// The task behind each end row `e` of `task_ends`, as `t` (the columns the
/// reports read): one probe by primary key per end row, and only while the
/// end row is its task's latest (a replayed task that ended again has a
/// newer one). OFFSET 0 keeps the planner from making it a join, which over
/// a long window it would answer by reading all of `tasks`.
macro_rules! ended_task {
    () => {
        " CROSS JOIN LATERAL (
    SELECT t.state, t.failure_reason, t.destination_id, t.not_before, t.delivered_at,
           t.finalized_at
    FROM tasks t WHERE t.id = e.task_id AND t.finalized_at = e.finalized_at
    OFFSET 0) t"
    };
}

mod api_tokens;
pub(in crate::store) mod audit;
mod changes;
mod connection;
mod tables;
#[macro_use]
mod destination_hours;
mod alerts;
mod destinations;
pub mod hot_path_sql;
mod keys;
mod leases;
mod rates;
mod replay_jobs;
mod reports;
mod schedule;
mod store;
mod store_now;
mod transfer;
mod upkeep;

pub use alerts::alerts_sql;

pub use reports::console_sql;
pub use reports::status_sql;

pub(super) use connection::migrate;

pub use connection::connect::PgConnector;
pub use connection::connect_failure::{ConnectFailure, PoolerError, TlsFailure};
pub(super) use connection::notify::Listener;
pub use connection::pooler::Pooler;
pub use connection::tls::{SslMode, TlsSettingsError};
pub use store::{PgConfig, PgStore};

// The store's shared names, as the files here name them (`super::…`).
use super::{
    rules::lifecycle, rules::requests, rules::schema_version, ClaimRequest, Clock, DatabaseUrl,
    Finish, Finished, RateGrant, RateRequest, Replayed, Scheduled, StoreError, StoreStats,
    TransitionOutcome,
};
