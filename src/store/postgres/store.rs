//! `PgStore`: the schedule on PostgreSQL through a bb8 pool of diesel-async
//! connections.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use diesel_async::pooled_connection::bb8::{Pool, PooledConnection};
use diesel_async::AsyncPgConnection;

use chrono::{DateTime, Duration, Utc};

use super::{
    api_tokens, claim, destinations, events, finish_many, lease, next_due, quota, rate, reads,
    reconcile, refusals, replay, retention, schedule_many, schema_check, secrets, send_targets,
    transitions, ClaimRequest, Clock, Finish, Finished, PgConnector, Pooler, QuotaNote, Replayed,
    Scheduled, Store, StoreError, StoreStats, TokenRequest, Tokens, TransitionOutcome,
};
use crate::domain::{
    Actor, ApiToken, Attempt, AttemptRecord, ClaimedTask, Destination, DestinationEvent,
    DestinationId, FailureReason, Lease, NewApiToken, NewDestination, NewTask, Payload,
    PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region, Rotation, SendTarget,
    SigningSecret, Task, TaskId, TokenHash, TokenId,
};
use crate::payload_crypto::PayloadKey;
use crate::policy::DisableRule;

mod read_replica;

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
    pool: Pool<AsyncPgConnection>,
    connector: PgConnector,
    /// Where LISTEN connects: PostgreSQL itself, or nowhere behind a
    /// transaction pooler without `direct_url`.
    listen: Option<PgConnector>,
    /// What the connect found worth a warning (a server that leaves `jit`
    /// on behind a pooler).
    warnings: Arc<[String]>,
    connect_timeout: StdDuration,
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
        let embedded = super::migrate::embedded_versions()?;
        schema_check::check(&mut first, &embedded, config.allow_newer_schema).await?;
        let warnings = super::pooler::check_settings(&mut first, config.pooler).await?;
        Ok(Self {
            pool: open_pool(&connector, config.pool_size, config.connect_timeout, first).await?,
            connector,
            listen,
            warnings: warnings.into_iter().collect(),
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

    /// What the connect found worth a warning, for the process to log.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn stats(&self) -> &StoreStats {
        &self.stats
    }

    /// Schedules `batch` on the caller's connection, typically inside the
    /// caller's own transaction, so the reminders commit (or roll back)
    /// with the business write that created them. Each task is answered as
    /// [`Store::schedule_many`] answers it.
    pub async fn schedule_many_on(
        &self,
        conn: &mut AsyncPgConnection,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        schedule_many::schedule_many_on(self, conn, batch).await
    }

    pub(crate) async fn conn(&self) -> Result<PooledConnection<'_, AsyncPgConnection>, StoreError> {
        Ok(self.pool.get().await?)
    }
}

/// A pool of up to `size` connections that starts with `first`.
async fn open_pool(
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
        .build(connector.manager())
        .await
        .map_err(StoreError::PoolSetup)?;
    // Refused only if the pool were full or the connection broken; a pool
    // without it opens its own on demand.
    let _ = pool.add(first);
    Ok(pool)
}

impl Store for PgStore {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        destinations::add_destination(self, new).await
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        destinations::destination(self, id).await
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        send_targets::send_targets(self, ids).await
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        secrets::rotate(self, id, rotation).await
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        secrets::list(self, id).await
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        destinations::pause_destination(self, id, pause).await
    }

    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        rate::take_tokens_many(self, asks).await
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        quota::learn_quotas(self, notes).await
    }

    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        schedule_many::schedule_many(self, batch).await
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        reads::task(self, id).await
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        reads::attempts(self, id).await
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        replay::replay(self, id, horizon).await
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        reconcile::reconcile(self, request).await
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        retention::prune(self, request).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        reads::ping(self).await
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        reads::payload(self, task).await
    }

    async fn next_due(&self, region: Region) -> Result<Option<Duration>, StoreError> {
        next_due::next_due(self, region).await
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        claim::claim_due(self, request).await
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        transitions::fail(self, lease, reason, record).await
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        transitions::abandon(self, lease, record).await
    }

    async fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        lease::hand_back(self, lease, after).await
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        lease::extend_lease(self, lease, by).await
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Finished, StoreError> {
        finish_many::finish_many(self, batch).await
    }

    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        api_tokens::add(self, new).await
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        api_tokens::by_hash(self, hash).await
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        api_tokens::list(self).await
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        api_tokens::revoke(self, id).await
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        refusals::mark_refused(self, id, why).await
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        destinations::disable(self, id, reason).await
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        destinations::fail_disabled_past_horizon(self, region, limit).await
    }

    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        events::events(self, region, limit).await
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        events::forget(self, ids).await
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        destinations::enable(self, id).await
    }
}
