//! `Database`: the store a process runs on, chosen by its URL. The runtime,
//! the API and the CLI hold a `Database` and never name a backend:
//! - `postgres://…` (or `postgresql://…`): [`PgStore`], for production
//!   (several hosts, throughput, point-in-time backups);
//! - `sqlite://PATH`: [`SqliteStore`], one file, nothing to install.

use std::path::PathBuf;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};

use super::sqlite::{self, SqliteStore};
use super::{
    ClaimRequest, Clock, Finish, PgConfig, PgStore, Replayed, Scheduled, Store, StoreError,
    StoreStats, TokenRequest, Tokens, TransitionOutcome,
};
use crate::domain::{
    quoted, Attempt, AttemptRecord, ClaimedTask, Destination, DestinationId, FailureReason,
    InvalidInput, Lease, NewDestination, NewTask, Payload, PruneReport, PruneRequest,
    ReconcileReport, ReconcileRequest, SendTarget, Task, TaskId,
};
use crate::payload_crypto::PayloadKey;
use crate::policy::Decision;

/// The URL remit uses when none is configured: a SQLite file in the
/// working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://remit.db";

/// Where a database URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Postgres(String),
    Sqlite(PathBuf),
}

impl DatabaseUrl {
    /// Reads `postgres://…`, `postgresql://…` or `sqlite://PATH` (a relative
    /// PATH is taken from the working directory: `sqlite:///var/lib/remit.db`
    /// is absolute).
    pub fn parse(url: &str) -> Result<Self, InvalidInput> {
        const ACCEPTED: &str = "must be postgres://USER@HOST:PORT/DATABASE or sqlite://PATH";
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DatabaseUrl::Postgres(url.to_owned()));
        }
        if let Some(path) = url.strip_prefix("sqlite://") {
            let path = path.split('?').next().unwrap_or_default();
            if path.is_empty() {
                return Err(InvalidInput::new(
                    "database.url",
                    format!("names no file ({ACCEPTED})"),
                ));
            }
            return Ok(DatabaseUrl::Sqlite(PathBuf::from(path)));
        }
        let scheme = url.split("://").next().filter(|s| *s != url);
        Err(InvalidInput::new(
            "database.url",
            match scheme {
                Some(scheme) => format!("has the unknown scheme {}: it {ACCEPTED}", quoted(scheme)),
                None => ACCEPTED.to_owned(),
            },
        ))
    }

    /// The URL with any password left out, fit for a log line.
    pub fn describe(&self) -> String {
        match self {
            DatabaseUrl::Postgres(url) => match url::Url::parse(url) {
                Ok(mut parsed) => {
                    if parsed.password().is_some() {
                        let _ = parsed.set_password(Some("***"));
                    }
                    format!(
                        "PostgreSQL at {}",
                        parsed.as_str().split('?').next().unwrap_or("")
                    )
                }
                Err(_) => "PostgreSQL".to_owned(),
            },
            DatabaseUrl::Sqlite(path) => format!("SQLite file {}", path.display()),
        }
    }
}

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    pub url: String,
    /// Connections a PostgreSQL pool opens (SQLite uses one).
    pub pool_size: u32,
    /// How long an operation waits for a free connection, and a new
    /// connection for the server, before failing.
    pub connect_timeout: StdDuration,
    /// Accept a schema with migrations this build does not know (a
    /// rollback onto a newer schema); an older one is always refused.
    pub allow_newer_schema: bool,
}

impl DatabaseConfig {
    pub fn new(url: impl Into<String>) -> Self {
        let pg = PgConfig::new(url);
        Self {
            url: pg.url,
            pool_size: pg.pool_size,
            connect_timeout: pg.connect_timeout,
            allow_newer_schema: pg.allow_newer_schema,
        }
    }
}

/// Applies every pending migration to the database `url` names (creating
/// a SQLite file that does not exist yet) and returns the versions applied.
pub async fn migrate(url: &str) -> Result<Vec<String>, StoreError> {
    match DatabaseUrl::parse(url)? {
        DatabaseUrl::Postgres(url) => super::migrate::migrate(&url).await,
        DatabaseUrl::Sqlite(path) => tokio::task::spawn_blocking(move || sqlite::migrate(&path))
            .await
            .map_err(|e| StoreError::Migration(format!("migration thread failed: {e}")))?,
    }
}

/// The store a process runs on. Cheap to clone.
#[derive(Debug, Clone)]
pub enum Database {
    Postgres(PgStore),
    Sqlite(SqliteStore),
}

impl From<PgStore> for Database {
    fn from(store: PgStore) -> Self {
        Database::Postgres(store)
    }
}

impl From<SqliteStore> for Database {
    fn from(store: SqliteStore) -> Self {
        Database::Sqlite(store)
    }
}

/// Calls the same method on whichever store this is.
macro_rules! on_store {
    ($self:expr, $store:ident => $call:expr) => {
        match $self {
            Database::Postgres($store) => $call,
            Database::Sqlite($store) => $call,
        }
    };
}

impl Database {
    /// Connects to the database the URL names, checks that it answers and
    /// that its schema is this build's (or, with `allow_newer_schema`,
    /// newer). A SQLite file is created and migrated if it needs to be;
    /// PostgreSQL is migrated only by [`migrate`] (`remit migrate`).
    pub async fn connect(config: &DatabaseConfig, key: PayloadKey) -> Result<Self, StoreError> {
        match DatabaseUrl::parse(&config.url)? {
            DatabaseUrl::Postgres(url) => {
                let pg = PgConfig {
                    url,
                    pool_size: config.pool_size,
                    connect_timeout: config.connect_timeout,
                    allow_newer_schema: config.allow_newer_schema,
                };
                Ok(Database::Postgres(PgStore::connect(&pg, key).await?))
            }
            DatabaseUrl::Sqlite(path) => {
                // The embedded file sets itself up: created and migrated on
                // first use, under its write lock. Only a newer schema can
                // be left to refuse.
                migrate(&config.url).await?;
                let allow_newer = config.allow_newer_schema;
                let checked = path.clone();
                tokio::task::spawn_blocking(move || sqlite::check_schema(&checked, allow_newer))
                    .await
                    .map_err(|e| StoreError::Thread(format!("schema check failed: {e}")))??;
                Ok(Database::Sqlite(SqliteStore::open(&path, key).await?))
            }
        }
    }

    /// The same database for one part of a process (the API), so it cannot
    /// take the connections another (delivery) needs: a pool of its own on
    /// PostgreSQL; on SQLite, whose writes serialize anyway, the same
    /// connection.
    pub async fn with_own_pool(&self, pool_size: u32) -> Result<Self, StoreError> {
        match self {
            Database::Postgres(pg) => Ok(Database::Postgres(pg.with_own_pool(pool_size).await?)),
            Database::Sqlite(lite) => Ok(Database::Sqlite(lite.clone())),
        }
    }

    /// Replaces the clock (tests pin it).
    pub fn with_clock(self, clock: Clock) -> Self {
        match self {
            Database::Postgres(pg) => Database::Postgres(pg.with_clock(clock)),
            Database::Sqlite(lite) => Database::Sqlite(lite.with_clock(clock)),
        }
    }

    pub fn clock(&self) -> &Clock {
        on_store!(self, s => s.clock())
    }

    pub fn stats(&self) -> &StoreStats {
        on_store!(self, s => s.stats())
    }

    /// "PostgreSQL" or "SQLite", for logs and status.
    pub fn kind(&self) -> &'static str {
        match self {
            Database::Postgres(_) => "PostgreSQL",
            Database::Sqlite(_) => "SQLite",
        }
    }
}

impl Store for Database {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        on_store!(self, s => s.add_destination(new).await)
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        on_store!(self, s => s.destination(id).await)
    }

    async fn signing_secret(&self, id: &DestinationId) -> Result<Option<String>, StoreError> {
        on_store!(self, s => s.signing_secret(id).await)
    }

    async fn send_target(&self, id: &DestinationId) -> Result<Option<SendTarget>, StoreError> {
        on_store!(self, s => s.send_target(id).await)
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        on_store!(self, s => s.send_targets(ids).await)
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        on_store!(self, s => s.pause_destination(id, pause).await)
    }

    async fn take_tokens(
        &self,
        id: &DestinationId,
        rate_per_second: f64,
        burst: u32,
        want: u32,
    ) -> Result<Tokens, StoreError> {
        on_store!(self, s => s.take_tokens(id, rate_per_second, burst, want).await)
    }

    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        on_store!(self, s => s.take_tokens_many(asks).await)
    }

    async fn schedule(&self, new: NewTask) -> Result<Scheduled, StoreError> {
        on_store!(self, s => s.schedule(new).await)
    }

    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        on_store!(self, s => s.schedule_many(batch).await)
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        on_store!(self, s => s.task(id).await)
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        on_store!(self, s => s.attempts(id).await)
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        on_store!(self, s => s.replay(id, horizon).await)
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        on_store!(self, s => s.reconcile(request).await)
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        on_store!(self, s => s.prune(request).await)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        on_store!(self, s => s.ping().await)
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        on_store!(self, s => s.payload(task).await)
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        on_store!(self, s => s.claim_due(request).await)
    }

    async fn mark_delivered(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.mark_delivered(lease, record).await)
    }

    async fn move_to_retry_wait(
        &self,
        lease: &Lease,
        available_at: DateTime<Utc>,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.move_to_retry_wait(lease, available_at, record).await)
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.fail(lease, reason, record).await)
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.abandon(lease, record).await)
    }

    async fn release(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.release(lease, after).await)
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.extend_lease(lease, by).await)
    }

    async fn finish(
        &self,
        lease: &Lease,
        destination: &DestinationId,
        decision: &Decision,
    ) -> Result<TransitionOutcome, StoreError> {
        on_store!(self, s => s.finish(lease, destination, decision).await)
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Vec<TransitionOutcome>, StoreError> {
        on_store!(self, s => s.finish_many(batch).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_backend_or_say_what_is_accepted() {
        assert_eq!(
            DatabaseUrl::parse("sqlite://remit.db"),
            Ok(DatabaseUrl::Sqlite(PathBuf::from("remit.db")))
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite:///var/lib/remit/remit.db"),
            Ok(DatabaseUrl::Sqlite(PathBuf::from(
                "/var/lib/remit/remit.db"
            )))
        );
        assert!(matches!(
            DatabaseUrl::parse("postgresql://u@h/db"),
            Ok(DatabaseUrl::Postgres(_))
        ));
        let err = DatabaseUrl::parse("mysql://root@localhost/remit").unwrap_err();
        assert_eq!(err.field, "database.url");
        assert!(err.reason.contains("\"mysql\"") && err.reason.contains("sqlite://PATH"));
        assert!(DatabaseUrl::parse("sqlite://").is_err());
        assert!(DatabaseUrl::parse("remit.db").is_err());
    }

    #[test]
    fn a_described_url_hides_its_password() {
        let url = DatabaseUrl::parse("postgres://remit:hunter2@db:5432/remit")
            .unwrap_or_else(|e| panic!("{e}"));
        let text = url.describe();
        assert!(!text.contains("hunter2"), "{text}");
    }
}
