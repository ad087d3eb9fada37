//! The configuration's sections, each a table of the TOML file.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// When a destination whose attempts all fail is disabled: after failing
/// for `disable_after_seconds` AND at least `disable_after_failures`
/// attempts (a destination's own thresholds, set when it is registered,
/// take precedence).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DestinationsConfig {
    pub disable_after_seconds: u64,
    pub disable_after_failures: u32,
}

impl DestinationsConfig {
    pub fn disable_rule(&self) -> remit::policy::DisableRule {
        remit::policy::DisableRule {
            after: chrono::Duration::seconds(
                i64::try_from(self.disable_after_seconds).unwrap_or(i64::MAX),
            ),
            failures: self.disable_after_failures,
        }
    }
}

/// Where operational events go (a destination disabled, enabled, failing
/// or recovered; tasks failed; reminders late or near the end of their
/// horizon): an ordinary destination remit creates from this at start,
/// signed with `secret` like any webhook. Without a `url` the events are
/// dropped from the outbox, and the alert check looks for nothing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `whsec_` and standard base64 (usually `REMIT_EVENTS__SECRET`).
    #[serde(skip_serializing)]
    pub secret: Option<String>,
    /// How often the outbox is read.
    pub poll_ms: u64,
    /// How often the alert check runs.
    pub check_interval_ms: u64,
    /// A reminder not delivered this long after its `not_before` is late
    /// (`reminder.late`); a destination's own setting wins.
    pub late_after_seconds: u64,
    /// A live task whose retry horizon ends within this is announced
    /// (`reminder.horizon_ending`).
    pub horizon_warning_seconds: u64,
    /// At most one `task.failed`, `reminder.late` and
    /// `reminder.horizon_ending` per destination in any window this long.
    pub window_seconds: u64,
    /// The levels of a destination's disable threshold, in percent, at
    /// which `destination.failing` is sent (each once per streak).
    pub failing_percents: Vec<u8>,
    /// The most tasks one event names (its count covers them all).
    pub sample_size: u32,
}

impl EventsConfig {
    /// What the region's alert check looks for.
    pub fn alert_check(&self, region: remit::domain::Region) -> remit::store::AlertCheck {
        let seconds = |s: u64| chrono::Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX));
        remit::store::AlertCheck {
            region,
            announce: self.url.is_some(),
            late_after: seconds(self.late_after_seconds),
            horizon_warning: seconds(self.horizon_warning_seconds),
            window: seconds(self.window_seconds),
            failing_levels: self.failing_percents.clone(),
            sample: usize::try_from(self.sample_size).unwrap_or(usize::MAX),
            batch: ALERT_BATCH,
            quiet_prefix: crate::events_destination::EVENTS_DESTINATION_PREFIX.to_owned(),
        }
    }
}

/// The most tasks of each kind one alert check reads (and of each
/// destination's late ones): the rest waits for the next check.
const ALERT_BATCH: u32 = 1_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: String,
    pub pool_size: u32,
    /// Start on a schema with migrations this release does not know (a
    /// rollback onto a newer schema); an older schema is always refused.
    pub allow_newer_schema: bool,
    /// A replica of the PostgreSQL database for what only reads (`remit
    /// status`, the console's overview, destinations, task search and
    /// audit log, a destination's stats), so an operator's dashboard does
    /// not load the primary. Unset: everything reads the primary.
    #[serde(default)]
    pub read_url: Option<String>,
    /// Connections the pool on `read_url` opens.
    #[serde(default = "read_pool_size")]
    pub read_pool_size: u32,
    /// What stands between `read_url` and the replica, as `pooler` says
    /// for `url`; unset, nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_pooler: Option<PoolerMode>,
    /// What stands between `url` and PostgreSQL: "none", or a pooler such
    /// as PgBouncer in "session" or "transaction" mode.
    pub pooler: PoolerMode,
    /// PostgreSQL itself, when `url` is a pooler: LISTEN and `remit
    /// migrate` need a session of their own, which a transaction pooler
    /// does not give.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct_url: Option<String>,
}

fn read_pool_size() -> u32 {
    2
}

/// `database.pooler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolerMode {
    None,
    Session,
    Transaction,
}

impl From<PoolerMode> for remit::store::Pooler {
    fn from(mode: PoolerMode) -> Self {
        match mode {
            PoolerMode::None => remit::store::Pooler::None,
            PoolerMode::Session => remit::store::Pooler::Session,
            PoolerMode::Transaction => remit::store::Pooler::Transaction,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseConfig {
    /// How long a claim holds a task before any consumer may take it over.
    pub seconds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendConfig {
    /// Whole-request timeout; must be well below the lease.
    pub timeout_ms: u64,
    /// Requests under way at once (until their outcome is committed); the
    /// process holds up to twice as many claimed tasks in memory.
    pub max_in_flight: u32,
    /// Sender actors.
    pub senders: u32,
    /// Response bytes read before the body is dropped.
    pub max_response_bytes: usize,
    /// Exceptions to the refused address ranges (loopback, private,
    /// link-local, ...): CIDRs, IP addresses and host names.
    pub allow_hosts: Vec<String>,
    /// Send over plain http to any host, not only to listed ones.
    pub allow_plain_http: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimConfig {
    pub batch_size: u32,
    pub per_destination_cap: u32,
    /// Poll interval while work is being found.
    pub busy_poll_ms: u64,
    /// Longest poll interval while idle (backs off up to it).
    pub idle_poll_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    pub backoff_base_ms: u64,
    pub backoff_cap_seconds: u64,
    pub max_attempts: u32,
    pub max_server_delay_seconds: u64,
    /// Default time after `not_before` during which retries may start.
    pub horizon_hours: u64,
    pub retryable_statuses: Vec<u16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleLimits {
    pub rate_per_second: f64,
    pub burst: u32,
    pub max_in_flight: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleConfig {
    /// Limits for every destination without an override.
    pub default: ThrottleLimits,
    /// Per-destination overrides, by destination id.
    pub destinations: BTreeMap<String, ThrottleLimits>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {
    pub bind: String,
    /// Database connections of the API's own, apart from
    /// `database.pool_size`, so requests cannot starve delivery.
    pub pool_size: u32,
    /// The bootstrap bearer token for /v1, scope admin (usually
    /// `REMIT_API_TOKEN`). Without one, /v1 accepts only API tokens made
    /// with `remit token create`.
    #[serde(skip_serializing)]
    pub token: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Json,
    Terminal,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    pub format: LogFormat,
    /// One of critical, error, warning, info, debug, trace.
    pub level: String,
    /// How often each destination with work gets one INFO line of what
    /// its deliveries came to (deliveries, retries, 429s, failures); a
    /// delivery of its own is logged at debug only. 0: no summary.
    #[serde(default = "summary_seconds")]
    pub summary_seconds: u64,
}

fn summary_seconds() -> u64 {
    60
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShutdownConfig {
    /// How long in-flight sends may take to finish after SIGTERM.
    pub grace_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconcileConfig {
    /// How often the runtime runs the reconciliation checks for its region
    /// and logs what they find; 0 turns it off.
    pub interval_seconds: u64,
    /// Eligible work waiting longer than this is reported.
    pub older_than_seconds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// A listener of its own for /metrics and the probes (/healthz,
    /// /readyz), e.g. `0.0.0.0:9464`, so they can be scraped without
    /// exposing the API. When set, /metrics is not served on `api.bind`.
    pub bind: Option<String>,
    /// Destinations named in per-destination series; the rest are counted
    /// under `other`, so label cardinality stays bounded.
    pub max_destinations: usize,
    /// How often the queue gauges (depth by state, oldest eligible age,
    /// expired leases) are refreshed by a query.
    pub queue_interval_seconds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionConfig {
    /// Whether `remit run` prunes its region; `remit prune` works either way.
    pub enabled: bool,
    /// Delivered and failed tasks are deleted, with their attempts and
    /// payloads, this many days after they ended. Must outlast any
    /// producer's retries: a pruned (tenant, reminder) can be scheduled,
    /// and delivered, again.
    pub keep_days: u64,
    /// Most tasks deleted in one transaction.
    pub batch_size: u32,
    /// Pause between pruning runs; a run goes until a batch comes back short.
    pub interval_seconds: u64,
    /// Entries of the audit log are deleted this many days after they
    /// were written (by the same runs, and `remit prune`). Longer than
    /// `keep_days` by default: who changed what is asked about long after
    /// the tasks it touched are gone.
    pub audit_keep_days: u64,
    /// Each destination's hourly health (`GET /v1/destinations/{id}/stats`)
    /// is deleted this many days after the hour ended.
    pub stats_keep_days: u64,
}

impl RetentionConfig {
    /// `keep_days` as a duration (validated, so it fits).
    pub fn keep(&self) -> chrono::Duration {
        days(self.keep_days)
    }

    /// `audit_keep_days` as a duration (validated, so it fits).
    pub fn audit_keep(&self) -> chrono::Duration {
        let days = i64::try_from(self.audit_keep_days).unwrap_or(i64::MAX);
        chrono::Duration::try_days(days).unwrap_or(chrono::Duration::MAX)
    }
    /// `stats_keep_days` as a duration (validated, so it fits).
    pub fn stats_keep(&self) -> chrono::Duration {
        days(self.stats_keep_days)
    }
}

fn days(n: u64) -> chrono::Duration {
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    chrono::Duration::try_days(n).unwrap_or(chrono::Duration::MAX)
}

/// Traces over OpenTelemetry (docs/runtime.md, "Tracing"). Off unless
/// `otlp_endpoint` is set: then no exporter runs and no span is made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracingConfig {
    /// Where spans are posted, OTLP over HTTP with protobuf, e.g.
    /// `http://127.0.0.1:4318` (a URL whose path is `/` gets
    /// `/v1/traces`; any other path is used as given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub otlp_endpoint: Option<String>,
    /// The `service.name` of every span.
    pub service_name: String,
}

/// The web console under /console (docs/operations.md, "Web console").
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleConfig {
    /// Whether `remit run` serves it.
    pub enabled: bool,
    /// Which listener serves it: the API's, or `metrics.bind`'s.
    pub listener: ConsoleListener,
    /// How long a sign-in lasts: 1 to 1440.
    pub session_minutes: u32,
    /// Mark the session cookie Secure, for a console reached through a
    /// proxy that ends TLS: remit itself serves plain HTTP, and does not
    /// trust a forwarded scheme header, so it cannot tell on its own.
    pub secure_cookie: bool,
    /// Failed sign-ins from one client address, within
    /// `sign_in_window_seconds` of the first, that lock the address out:
    /// 1 to 1000.
    pub sign_in_failures: u32,
    /// The span the failures must fall in: 1 to 86400.
    pub sign_in_window_seconds: u64,
    /// How long sign-ins from a locked-out address are refused (429):
    /// 1 to 86400.
    pub sign_in_lockout_seconds: u64,
}

/// Where the console is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleListener {
    /// `api.bind`.
    Api,
    /// `metrics.bind`, which must then be set.
    Metrics,
}
