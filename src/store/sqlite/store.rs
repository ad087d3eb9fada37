//! `SqliteStore`: one file, its one write connection behind a lock, and
//! what every operation runs with (`Ctx`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, SubsecRound, Utc};
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;
use parking_lot::Mutex;

use crate::domain::Actor;
use crate::payload_crypto::PayloadKey;
use crate::policy::DisableRule;
use crate::store::contract::{Clock, StoreError, StoreStats, Wakeup};

/// The SQLite store. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct SqliteStore {
    pub(super) shared: Arc<Shared>,
    pub(super) key: PayloadKey,
    pub(super) clock: Clock,
    pub(super) disable_rule: DisableRule,
    /// Who the admin calls on this handle act as, for the audit log.
    pub(super) actor: Actor,
}

pub(super) struct Shared {
    pub(super) conn: Mutex<SqliteConnection>,
    pub(super) path: PathBuf,
    pub(super) stats: StoreStats,
    pub(super) wakeups: tokio::sync::broadcast::Sender<Wakeup>,
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
pub(in crate::store) struct Ctx {
    pub(super) now: DateTime<Utc>,
    pub(super) key: PayloadKey,
    /// Who acts, for the audit entry an admin call writes.
    pub(super) actor: Actor,
}

impl SqliteStore {
    /// Opens the file (which must exist and be migrated: see [`migrate`]).
    pub async fn open(path: &Path, key: PayloadKey) -> Result<Self, StoreError> {
        let path = path.to_owned();
        let conn = blocking({
            let path = path.clone();
            move || super::connection::open(&path, false)
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

    pub(in crate::store) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Wakeup> {
        self.shared.wakeups.subscribe()
    }

    pub(super) fn wake(&self, wakeup: Wakeup) {
        // No subscriber is fine: nobody in this process is listening.
        let _ = self.shared.wakeups.send(wakeup);
    }

    /// Runs `op` on the connection, on a blocking thread; with `write`, in
    /// a `BEGIN IMMEDIATE` transaction that commits when `op` succeeds.
    pub(in crate::store) async fn run<T, F>(&self, write: bool, op: F) -> Result<T, StoreError>
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
                *conn = super::connection::open(&shared.path, false)?;
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
pub(super) fn next_token(conn: &mut SqliteConnection) -> Result<i64, StoreError> {
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
