//! `PgStore`: the schedule on PostgreSQL through a bb8 pool of diesel-async
//! connections.
//! (`read_replica` beside it opens one on a replica.)

use std::sync::Arc;
use std::time::Duration as StdDuration;

use bb8::QueueStrategy;
use diesel_async::pooled_connection::bb8::{Pool, PooledConnection};
use diesel_async::AsyncPgConnection;

use super::connection::schema_check;
use crate::domain::Actor;
use crate::payload_crypto::PayloadKey;
use crate::policy::DisableRule;
use crate::store::contract::{Clock, StoreError, StoreStats};
use crate::store::postgres::connection::connect::PgConnector;
use crate::store::postgres::connection::pooler::Pooler;

/// How to reach the database.
#[derive(Debug, Clone)]
pub struct PgConfig {
    pub url: String,
    pub pool_size: u32,
    /// How long an operation waits for a free connection, and a new
    /// connection for the server, before failing.
    pub connect_timeout: StdDuration,
    /// Accept a schema with migrations this build does not know (a
    /// rollback onto a newer schema); an older one is always refused.
    pub allow_newer_schema: bool,
    /// What stands between `url` and PostgreSQL.
    pub pooler: Pooler,
    /// PostgreSQL itself, when `url` is a pooler: for LISTEN (and
    /// `remit migrate`, which takes it from the configuration).
    pub direct_url: Option<String>,
}

impl PgConfig {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            pool_size: 8,
            connect_timeout: StdDuration::from_secs(5),
            allow_newer_schema: false,
            pooler: Pooler::None,
            direct_url: None,
        }
    }
}

/// The PostgreSQL store. Cheap to clone: clones share the pool.
#[derive(Clone)]
pub struct PgStore {
    pub(super) pool: Pool<AsyncPgConnection>,
    pub(super) connector: PgConnector,
    /// Where LISTEN connects: PostgreSQL itself, or nowhere behind a
    /// transaction pooler without `direct_url`.
    pub(super) listen: Option<PgConnector>,
    pub(super) connect_timeout: StdDuration,
    pub(crate) key: PayloadKey,
    pub(crate) clock: Clock,
    pub(crate) stats: Arc<StoreStats>,
    pub(crate) disable_rule: DisableRule,
    /// Who the admin calls on this handle act as, for the audit log.
    pub(crate) actor: Actor,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("pool", &self.pool.state())
            .field("key", &self.key)
            .field("clock", &self.clock)
            .field("actor", &self.actor)
            .finish()
    }
}

impl PgStore {
    /// Opens a pool whose first connection is made here, so a database
    /// that cannot be reached says why at once (rather than when the
    /// pool's wait runs out), and checks that the schema is this build's.
    pub async fn connect(config: &PgConfig, key: PayloadKey) -> Result<Self, StoreError> {
        let connector =
            PgConnector::behind(&config.url, config.connect_timeout, config.pooler)?.for_store();
        let listen = match (&config.direct_url, config.pooler) {
            (Some(direct), _) => Some(PgConnector::new(direct, config.connect_timeout)?),
            (None, Pooler::Transaction) => None,
            (None, _) => Some(connector.clone()),
        };
        let mut first = connector.establish().await?;
        let embedded = super::connection::migrate::embedded_versions()?;
        schema_check::check(&mut first, &embedded, config.allow_newer_schema).await?;
        Ok(Self {
            pool: open_pool(&connector, config.pool_size, config.connect_timeout, first).await?,
            connector,
            listen,
            connect_timeout: config.connect_timeout,
            key,
            clock: Clock::database(),
            stats: Arc::default(),
            disable_rule: DisableRule::default(),
            actor: Actor::System,
        })
    }

    /// The same database, key, clock and counters through a pool of its
    /// own of `pool_size` connections, so one part of a process (the API)
    /// cannot take the connections another (delivery) needs.
    pub async fn with_own_pool(&self, pool_size: u32) -> Result<Self, StoreError> {
        let first = self.connector.establish().await?;
        Ok(Self {
            pool: open_pool(&self.connector, pool_size, self.connect_timeout, first).await?,
            ..self.clone()
        })
    }

    /// The same store on a pool of `pool_size` whose connections plan each
    /// prepared statement once (`PgConnector::with_generic_plans`): the
    /// pool delivery runs on. This handle's own pool is left as it is.
    pub async fn with_generic_plans(&self, pool_size: u32) -> Result<Self, StoreError> {
        let connector = self.connector.with_generic_plans();
        let first = connector.establish().await?;
        Ok(Self {
            pool: open_pool(&connector, pool_size, self.connect_timeout, first).await?,
            connector,
            ..self.clone()
        })
    }

    /// Replaces the clock (tests and the simulation pin it).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The thresholds that disable a failing destination without its own.
    pub fn with_disable_rule(mut self, rule: DisableRule) -> Self {
        self.disable_rule = rule;
        self
    }

    /// The same store (pool, key, clock) whose admin calls record `actor`
    /// in the audit log.
    pub fn acting_as(&self, actor: Actor) -> Self {
        Self {
            actor,
            ..self.clone()
        }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Opens the LISTEN connection, outside the pool: `None` behind a
    /// transaction pooler without a direct URL, where LISTEN cannot go.
    pub(crate) fn listen_connector(&self) -> Option<&PgConnector> {
        self.listen.as_ref()
    }

    pub fn stats(&self) -> &StoreStats {
        &self.stats
    }

    pub(crate) async fn conn(&self) -> Result<PooledConnection<'_, AsyncPgConnection>, StoreError> {
        Ok(self.pool.get().await?)
    }
}

/// A pool of up to `size` connections that starts with `first`.
pub(super) async fn open_pool(
    connector: &PgConnector,
    size: u32,
    timeout: StdDuration,
    first: AsyncPgConnection,
) -> Result<Pool<AsyncPgConnection>, StoreError> {
    let pool = Pool::builder()
        .max_size(size.max(1))
        .connection_timeout(timeout)
        // No `SELECT 1` before every checkout (a round trip per operation):
        // a connection that broke fails its statement, every caller
        // already handles a failed statement, and bb8 drops a connection
        // diesel reports as broken.
        .test_on_check_out(false)
        // The connection used last goes out first. Each connection
        // prepares and plans every statement it runs once, and the claim's
        // and the finish's plans cost milliseconds each: handed out in
        // turn (bb8's default), all of a pool's connections planned both,
        // 20 times over in a drain with `pool_size = 20`. Most recent
        // first, the few a drain keeps busy do all the work, and the rest
        // stay idle until a burst needs them.
        .queue_strategy(QueueStrategy::Lifo)
        .build(connector.manager())
        .await
        .map_err(StoreError::PoolSetup)?;
    // Refused only if the pool were full or the connection broken; a pool
    // without it opens its own on demand.
    let _ = pool.add(first);
    Ok(pool)
}
