//! remit's configuration: defaults that work on one machine, then a TOML
//! file, then the environment (`REMIT_` plus the key path in upper case with
//! `__` between sections, e.g. `REMIT_LEASE__SECONDS`), then the usual
//! variables for secrets and the database.

use std::collections::BTreeMap;
use std::path::Path;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use remit::domain::{DestinationId, Region};
use remit::policy::RetryPolicy;
use serde::{Deserialize, Serialize};

use crate::egress::{AllowList, Egress};

mod read_error;
mod validate;

/// The configuration as read; every field has a default.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub region: String,
    /// The lease owner: the name this process holds leases under, recorded
    /// on each task it leases and each attempt it makes; defaults to
    /// `host-pid`. Read under its former name `consumer_id` too (left out
    /// of the serialized defaults, or the alias would read it twice).
    #[serde(alias = "consumer_id", skip_serializing_if = "Option::is_none")]
    pub lease_owner: Option<String>,
    /// Accept tasks for other regions through the API (they are still sent
    /// only by their own region's process).
    pub allow_other_regions: bool,
    pub database: DatabaseConfig,
    pub lease: LeaseConfig,
    pub send: SendConfig,
    pub claim: ClaimConfig,
    pub retry: RetryConfig,
    pub throttle: ThrottleConfig,
    pub api: ApiConfig,
    pub log: LogConfig,
    pub shutdown: ShutdownConfig,
    pub reconcile: ReconcileConfig,
    pub retention: RetentionConfig,
    pub metrics: MetricsConfig,
    pub destinations: DestinationsConfig,
    pub events: EventsConfig,
    /// The payload key, standard base64 (usually `REMIT_PAYLOAD_KEY`).
    #[serde(skip_serializing)]
    pub payload_key: Option<String>,
    /// A ring of payload keys, newest first, comma-separated
    /// (`REMIT_PAYLOAD_KEYS`); instead of `payload_key`.
    #[serde(skip_serializing)]
    pub payload_keys: Option<String>,
    /// A file with one payload key per line, newest first
    /// (`REMIT_PAYLOAD_KEY_FILE`); instead of `payload_key`.
    #[serde(default)]
    pub payload_key_file: Option<std::path::PathBuf>,
}

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

/// Where operational events (`destination.disabled`,
/// `destination.enabled`) go: an ordinary destination remit creates from
/// this at start, signed with `secret` like any webhook. Without a `url`
/// the events are dropped from the outbox.
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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: String,
    pub pool_size: u32,
    /// Start on a schema with migrations this release does not know (a
    /// rollback onto a newer schema); an older schema is always refused.
    pub allow_newer_schema: bool,
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
}

impl RetentionConfig {
    /// `keep_days` as a duration (validated, so it fits).
    pub fn keep(&self) -> chrono::Duration {
        let days = i64::try_from(self.keep_days).unwrap_or(i64::MAX);
        chrono::Duration::try_days(days).unwrap_or(chrono::Duration::MAX)
    }
}

impl Default for Config {
    fn default() -> Self {
        let retry = RetryPolicy::default();
        Self {
            region: "us".into(),
            lease_owner: None,
            allow_other_regions: false,
            database: DatabaseConfig {
                url: remit::store::DEFAULT_DATABASE_URL.into(),
                pool_size: 8,
                allow_newer_schema: false,
            },
            lease: LeaseConfig { seconds: 30 },
            send: SendConfig {
                timeout_ms: 10_000,
                max_in_flight: 256,
                senders: 4,
                max_response_bytes: 64 * 1024,
                allow_hosts: Vec::new(),
                allow_plain_http: false,
            },
            claim: ClaimConfig {
                batch_size: 64,
                per_destination_cap: 16,
                busy_poll_ms: 20,
                idle_poll_ms: 1_000,
            },
            retry: RetryConfig {
                backoff_base_ms: millis(retry.backoff_base),
                backoff_cap_seconds: millis(retry.backoff_cap) / 1000,
                max_attempts: retry.max_attempts,
                max_server_delay_seconds: millis(retry.max_server_delay) / 1000,
                horizon_hours: millis(retry.horizon) / 3_600_000,
                retryable_statuses: retry.retryable_statuses,
            },
            throttle: ThrottleConfig {
                default: ThrottleLimits {
                    rate_per_second: 20.0,
                    burst: 20,
                    max_in_flight: 8,
                },
                destinations: BTreeMap::new(),
            },
            api: ApiConfig {
                bind: "127.0.0.1:8080".into(),
                pool_size: 4,
                token: None,
            },
            log: LogConfig {
                format: LogFormat::Terminal,
                level: "info".into(),
            },
            shutdown: ShutdownConfig { grace_ms: 10_000 },
            reconcile: ReconcileConfig {
                interval_seconds: 300,
                older_than_seconds: 900,
            },
            metrics: MetricsConfig {
                bind: None,
                max_destinations: 100,
                queue_interval_seconds: 15,
            },
            retention: RetentionConfig {
                enabled: true,
                keep_days: 30,
                batch_size: 500,
                interval_seconds: 300,
            },
            destinations: DestinationsConfig {
                disable_after_seconds: 24 * 3600,
                disable_after_failures: 20,
            },
            events: EventsConfig {
                url: None,
                secret: None,
                poll_ms: 1_000,
            },
            payload_key: None,
            payload_keys: None,
            payload_key_file: None,
        }
    }
}

fn millis(d: chrono::Duration) -> u64 {
    u64::try_from(d.num_milliseconds()).unwrap_or(0)
}

/// A configuration error: which key, and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A value that could not be read: which key, where it came from and
    /// what is accepted.
    #[error("{}", read_error::describe(.0))]
    Read(Box<figment::Error>),
    #[error("configuration key {key}: {reason}")]
    Invalid { key: String, reason: String },
    #[error("configuration file {0} does not exist")]
    MissingFile(String),
}

fn invalid(key: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        reason: reason.into(),
    }
}

/// The `REMIT_` variables that are not configuration keys: the secrets
/// read into settings of another name below, and the command line's own
/// (`REMIT_CONFIG` names the file, `REMIT_DESTINATION_SECRET` is a flag of
/// `destination add`). Without this list a systemd unit that sets
/// `REMIT_CONFIG` would be refused as setting an unknown key `config`.
pub const NOT_CONFIGURATION_KEYS: &[&str] = &[
    "PAYLOAD_KEY",
    "PAYLOAD_KEYS",
    "API_TOKEN",
    "CONFIG",
    "DESTINATION_SECRET",
];

impl Config {
    /// Defaults, then `file` (when given), then the environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(path) = file {
            if !path.exists() {
                return Err(ConfigError::MissingFile(path.display().to_string()));
            }
            figment = figment.merge(Toml::file_exact(path));
        }
        let config: Config = figment
            .merge(
                Env::prefixed("REMIT_")
                    .split("__")
                    .ignore(NOT_CONFIGURATION_KEYS),
            )
            .merge(
                Env::raw()
                    .only(&["DATABASE_URL"])
                    .map(|_| "database.url".into()),
            )
            .merge(
                Env::raw()
                    .only(&["REMIT_PAYLOAD_KEY"])
                    .map(|_| "payload_key".into()),
            )
            .merge(
                Env::raw()
                    .only(&["REMIT_PAYLOAD_KEYS"])
                    .map(|_| "payload_keys".into()),
            )
            .merge(
                Env::raw()
                    .only(&["REMIT_API_TOKEN"])
                    .map(|_| "api.token".into()),
            )
            .extract()
            .map_err(|e| ConfigError::Read(Box::new(e)))?;
        config.validate()?;
        Ok(config)
    }

    pub fn region(&self) -> Result<Region, ConfigError> {
        self.region
            .parse()
            .map_err(|e: remit::domain::InvalidInput| invalid("region", e.reason))
    }

    pub fn log_level(&self) -> Result<slog::Level, ConfigError> {
        self.log.level.parse().map_err(|()| {
            invalid(
                "log.level",
                "accepted: critical, error, warning, info, debug, trace",
            )
        })
    }

    pub fn lease_owner(&self) -> String {
        self.lease_owner.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/etc/hostname")
                .map(|h| h.trim().to_owned())
                .ok()
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "remit".into());
            format!("{host}-{}", std::process::id())
        })
    }

    pub fn retry_policy(&self) -> RetryPolicy {
        let r = &self.retry;
        let secs = |s: u64| chrono::Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX / 1000));
        RetryPolicy {
            backoff_base: chrono::Duration::milliseconds(
                i64::try_from(r.backoff_base_ms).unwrap_or(i64::MAX),
            ),
            backoff_cap: secs(r.backoff_cap_seconds),
            max_attempts: r.max_attempts,
            max_server_delay: secs(r.max_server_delay_seconds),
            horizon: secs(r.horizon_hours.saturating_mul(3600)),
            retryable_statuses: r.retryable_statuses.clone(),
        }
    }

    /// The send policy: which destinations may be reached.
    pub fn egress(&self) -> Result<Egress, ConfigError> {
        let allow = AllowList::parse(&self.send.allow_hosts)
            .map_err(|reason| invalid("send.allow_hosts", reason))?;
        Ok(Egress::new(allow, self.send.allow_plain_http))
    }

    pub fn throttle_for(&self, destination: &DestinationId) -> ThrottleLimits {
        self.throttle
            .destinations
            .get(destination.as_str())
            .copied()
            .unwrap_or(self.throttle.default)
    }
}

#[cfg(test)]
mod tests;
