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
mod transfer;
mod upkeep;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, SubsecRound, Utc};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;
use parking_lot::Mutex;

pub(super) use connection::{check_schema, migrate};

use crate::domain::Actor;
use crate::payload_crypto::PayloadKey;
use crate::policy::DisableRule;
use crate::store::contract::{Clock, StoreError, StoreStats, Wakeup};

/// The SQLite store. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct SqliteStore {
    shared: Arc<Shared>,
    key: PayloadKey,
    clock: Clock,
    disable_rule: DisableRule,
    /// Who the admin calls on this handle act as, for the audit log.
    actor: Actor,
}

struct Shared {
    conn: Mutex<SqliteConnection>,
    path: PathBuf,
    stats: StoreStats,
    wakeups: tokio::sync::broadcast::Sender<Wakeup>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.shared.path)
            .field("key", &self.key)
            .field("clock", &self.clock)
            .field("actor", &self.actor)
            .finish()
    }
}

/// What an operation gets besides the connection.
pub(super) struct Ctx {
    now: DateTime<Utc>,
    key: PayloadKey,
    /// Who acts, for the audit entry an admin call writes.
    actor: Actor,
}

impl SqliteStore {
    /// Opens the file (which must exist and be migrated: see [`migrate`]).
    pub async fn open(path: &Path, key: PayloadKey) -> Result<Self, StoreError> {
        let path = path.to_owned();
        let conn = blocking({
            let path = path.clone();
            move || connection::open(&path, false)
        })
        .await?;
        let (wakeups, _) = tokio::sync::broadcast::channel(256);
        Ok(Self {
            shared: Arc::new(Shared {
                conn: Mutex::new(conn),
                path,
                stats: StoreStats::default(),
                wakeups,
            }),
            key,
            clock: Clock::database(),
            disable_rule: DisableRule::default(),
            actor: Actor::System,
        })
    }

    /// Replaces the clock (tests and the simulation pin it). Unpinned, the
    /// clock is the host's: every process on one file shares the host.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The thresholds that disable a failing destination without its own.
    pub fn with_disable_rule(mut self, rule: DisableRule) -> Self {
        self.disable_rule = rule;
        self
    }

    /// The same file and connection whose admin calls record `actor` in
    /// the audit log.
    pub fn acting_as(&self, actor: Actor) -> Self {
        Self {
            actor,
            ..self.clone()
        }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn stats(&self) -> &StoreStats {
        &self.shared.stats
    }

    pub(crate) fn key(&self) -> &PayloadKey {
        &self.key
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The same file with another payload key, on a connection of its own,
    /// as another process would open it.
    pub async fn reopen_with_key(&self, key: PayloadKey) -> Result<Self, StoreError> {
        Ok(Self::open(&self.shared.path, key)
            .await?
            .with_clock(self.clock.clone())
            .with_disable_rule(self.disable_rule))
    }

    pub(super) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Wakeup> {
        self.shared.wakeups.subscribe()
    }

    fn wake(&self, wakeup: Wakeup) {
        // No subscriber is fine: nobody in this process is listening.
        let _ = self.shared.wakeups.send(wakeup);
    }

    /// Runs `op` on the connection, on a blocking thread; with `write`, in
    /// a `BEGIN IMMEDIATE` transaction that commits when `op` succeeds.
    pub(super) async fn run<T, F>(&self, write: bool, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut SqliteConnection, &Ctx) -> Result<T, StoreError> + Send + 'static,
    {
        let shared = self.shared.clone();
        let clock = self.clock.clone();
        let key = self.key.clone();
        let actor = self.actor.clone();
        blocking(move || {
            let mut conn = shared.conn.lock();
            // Read after the write lock is taken, so each host's writers
            // see time move forward in commit order.
            let ctx = |clock: &Clock| Ctx {
                now: clock
                    .now_param()
                    .unwrap_or_else(|| Utc::now().trunc_subsecs(6)),
                key: key.clone(),
                actor: actor.clone(),
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if write {
                    conn.immediate_transaction(|conn| {
                        let ctx = ctx(&clock);
                        op(conn, &ctx)
                    })
                } else {
                    op(&mut conn, &ctx(&clock))
                }
            }));
            outcome.unwrap_or_else(|_| {
                // A panic leaves diesel's transaction open and the file's
                // write lock held. A fresh connection drops the old one,
                // which rolls back what it had written and frees the lock.
                *conn = connection::open(&shared.path, false)?;
                Err(StoreError::Thread(
                    "a database operation panicked; it was rolled back".into(),
                ))
            })
        })
        .await
    }
}

/// Runs blocking work off the async runtime's thread.
async fn blocking<T, F>(work: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, StoreError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Thread(e.to_string()))?
}

/// The next fencing token.
fn next_token(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Token {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        last: i64,
    }
    let token: Token =
        diesel::sql_query("UPDATE lease_tokens SET last = last + 1 WHERE id = 1 RETURNING last")
            .get_result(conn)?;
    Ok(token.last)
}
