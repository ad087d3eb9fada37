//! The PostgreSQL store: [`PgStore`] over a bb8 pool of diesel-async
//! connections, and everything that speaks PostgreSQL's SQL. The rules
//! these statements carry out are the store root's (`lifecycle`,
//! `claim_turn`, `rules`, …): the files here say how PostgreSQL applies
//! them, in as few statements as it can.
//!
//! # Layout
//! - `store`: [`PgStore`] and its pool.
//! - Each trait of the contract in the file named like its contract
//!   file, each call into the file that holds its statements (or, where
//!   the trait's file is that file, in place): `schedule`, `leases`,
//!   `destinations`, `rates`, `api_tokens`, `upkeep` (its settling of
//!   disabled destinations here), `alerts`, `changes`, `reports`,
//!   `audit`, `destination_hours`, `replay_jobs`, `transfer`, `keys`.
//!   The statement files never import the trait files, so none imports
//!   the file that calls it.
//! - `connect`: every connection to PostgreSQL; `connect_failure`: why one
//!   could not be opened, or is not PostgreSQL's own;
//!   `tls`: TLS as the URL's `sslmode`, `sslrootcert`, `sslcert` and
//!   `sslkey` ask for it; `tls_checks`: what the modes that check less
//!   than `verify-full` accept; `pooler`: what changes behind a connection
//!   pooler (PgBouncer), and the session settings checked at connect.
//! - The statements, a file per group: `claim`; `transitions` (`fail`,
//!   `abandon`) and `finish_many` (the runtime's finishes, in batches);
//!   `lease` (hand back, extend); `schedule_many`; `destination_rows` (add,
//!   read, pause, disable, enable, the row lock of a change); `destination_changes` (an operator's change of a destination,
//!   its deletion) and `headers` (its custom header rows); `send_targets`
//!   (destinations read for their sends, many at once); `quota` (what
//!   receivers announced of their quotas); `secrets` (signing secrets:
//!   add, rotate, list, the valid ones of many destinations); `rate`
//!   (token takes); `reads` (task, attempts, payload, ping); `next_due`
//!   (when a claim could next find work); `changes` (an operator's
//!   cancel, reschedule, erase and retry-now); `reconcile`; `replay`;
//!   `retention` (prune); `audit` (an admin action's entry, written in its
//!   transaction; pages; retention).
//! - `store_now`: the store's now inside a transaction (pinned in tests).
//! - `prepared`: the hot statements, built so each connection prepares
//!   them once; `hot_path_sql` names them for the test that plans them.
//! - `schema`, `rows`, `enums`: diesel's view of the tables and the
//!   conversion of rows into domain types.
//! - `migrate`: the embedded migrations (`migrations/postgres`);
//!   `schema_check`: whether a database has this build's; `lock_holders`:
//!   the sessions likely in a migration's way.
//! - `replication`: the server's replication, for `remit status`.
//! - `status`, `console`, `transfer`, `payload_keys`, `rekey` and
//!   `replay_jobs`: the statements behind the reports, export and import,
//!   the key ring and bulk replays; `refusals`: `Destinations::mark_refused`.
//!   The text of the statements a test plans stands in one place each:
//!   `status_sql`, `console_sql`, `alerts_sql`.
//! - `notify`: the LISTEN/NOTIFY channels and the connection that listens.
//! - `alerts`: the region's alert check, one transaction under an
//!   advisory lock; `events`: the outbox it and the disables write.
//! - `destination_hours`: each destination's health by the hour (read and
//!   pruned; `finish_many` writes it).

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

mod alerts;
pub mod alerts_sql;
mod api_tokens;
pub(in crate::store) mod audit;
mod changes;
mod claim;
mod connect;
mod connect_failure;
mod console;
pub mod console_sql;
mod destination_changes;
mod keys;
mod leases;
mod rates;
mod reports;
mod schedule;
mod upkeep;
#[macro_use]
mod destination_hours;
mod destination_rows;
mod destinations;
mod enums;
mod events;
mod finish_many;
mod headers;
pub mod hot_path_sql;
mod lease;
mod lock_holders;
pub(super) mod migrate;
mod next_due;
mod notify;
mod payload_keys;
mod pooler;
mod prepared;
mod quota;
mod rate;
mod reads;
mod reconcile;
mod refusals;
mod rekey;
mod replay;
mod replay_jobs;
mod replication;
mod retention;
mod rows;
mod schedule_many;
mod schema;
mod schema_check;
mod secrets;
mod send_targets;
mod status;
pub mod status_sql;
mod store;
mod store_now;
mod tls;
mod tls_checks;
mod transfer;
mod transitions;

pub use connect::PgConnector;
pub use connect_failure::{ConnectFailure, PoolerError, TlsFailure};
pub(super) use notify::Listener;
pub use pooler::Pooler;
pub use store::{PgConfig, PgStore};
pub use tls::{SslMode, TlsSettingsError};

// The store's shared names, as the files here name them (`super::…`).
use super::{
    rules::lifecycle, rules::requests, rules::schema_version, ClaimRequest, Clock, DatabaseUrl,
    Finish, Finished, Replayed, Scheduled, StoreError, StoreStats, TokenRequest, Tokens,
    TransitionOutcome,
};
