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

/// The configuration as read; every field has a default.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub region: String,
    /// Who holds leases; defaults to `host-pid`.
    pub consumer_id: Option<String>,
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
    /// The payload key, standard base64 (usually `REMIT_PAYLOAD_KEY`).
    #[serde(skip_serializing)]
    pub payload_key: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: String,
    pub pool_size: u32,
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
    /// Tasks held in memory at once (queued in throttles or in flight).
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
    /// Bearer token for /v1 (usually `REMIT_API_TOKEN`). Without one, /v1
    /// refuses every request.
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

impl Default for Config {
    fn default() -> Self {
        let retry = RetryPolicy::default();
        Self {
            region: "us".into(),
            consumer_id: None,
            allow_other_regions: false,
            database: DatabaseConfig {
                url: "postgres://postgres@127.0.0.1:5432/postgres".into(),
                pool_size: 8,
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
                pool_size: 2,
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
            payload_key: None,
        }
    }
}

fn millis(d: chrono::Duration) -> u64 {
    u64::try_from(d.num_milliseconds()).unwrap_or(0)
}

/// A configuration error: which key, and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// figment's message names the key and where its value came from.
    #[error("configuration: {0}")]
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
                    .ignore(&["PAYLOAD_KEY", "API_TOKEN"]),
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
                    .only(&["REMIT_API_TOKEN"])
                    .map(|_| "api.token".into()),
            )
            .extract()
            .map_err(|e| ConfigError::Read(Box::new(e)))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.region()?;
        if self.lease.seconds == 0 {
            return Err(invalid("lease.seconds", "must be at least 1"));
        }
        self.within_bounds()?;
        if self.send.timeout_ms == 0 || self.send.timeout_ms * 2 > self.lease.seconds * 1000 {
            return Err(invalid(
                "send.timeout_ms",
                format!(
                    "must be between 1 and half the lease ({} ms), so a slow send is not reclaimed mid-flight",
                    self.lease.seconds * 500
                ),
            ));
        }
        for (key, value) in [
            ("send.max_in_flight", self.send.max_in_flight),
            ("send.senders", self.send.senders),
            ("claim.batch_size", self.claim.batch_size),
            ("claim.per_destination_cap", self.claim.per_destination_cap),
            ("database.pool_size", self.database.pool_size),
            ("api.pool_size", self.api.pool_size),
            ("retry.max_attempts", self.retry.max_attempts),
        ] {
            if value == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }
        if self.claim.busy_poll_ms == 0 || self.claim.idle_poll_ms < self.claim.busy_poll_ms {
            return Err(invalid(
                "claim.idle_poll_ms",
                "must be at least claim.busy_poll_ms, which must be at least 1",
            ));
        }
        if let Some(s) = self
            .retry
            .retryable_statuses
            .iter()
            .find(|s| !(100..=599).contains(*s))
        {
            return Err(invalid(
                "retry.retryable_statuses",
                format!("{s} is not an HTTP status (100 to 599)"),
            ));
        }
        let limits = std::iter::once(("throttle.default".to_owned(), &self.throttle.default))
            .chain(
                self.throttle
                    .destinations
                    .iter()
                    .map(|(id, l)| (format!("throttle.destinations.{id}"), l)),
            );
        for (key, l) in limits {
            // The shared bucket refills at no less than 0.001 per second.
            if !(l.rate_per_second >= 0.001 && l.rate_per_second.is_finite()) {
                return Err(invalid(
                    &format!("{key}.rate_per_second"),
                    "must be a number of at least 0.001",
                ));
            }
            if l.burst == 0 || l.max_in_flight == 0 {
                return Err(invalid(
                    &format!("{key}.burst/max_in_flight"),
                    "must be at least 1",
                ));
            }
        }
        self.log_level()?;
        self.egress()?;
        Ok(())
    }

    /// Upper bounds on every setting that feeds arithmetic, so no value a
    /// file or the environment can hold makes a time or a size overflow.
    /// Each bound is far beyond any sensible setting.
    fn within_bounds(&self) -> Result<(), ConfigError> {
        const DAY_S: u64 = 24 * 3600;
        const YEAR_S: u64 = 365 * DAY_S;
        let (r, c) = (&self.retry, &self.claim);
        let bounds: [(&str, u64, u64); 16] = [
            ("lease.seconds", self.lease.seconds, DAY_S),
            ("send.timeout_ms", self.send.timeout_ms, DAY_S * 1000),
            (
                "send.max_in_flight",
                self.send.max_in_flight.into(),
                1_000_000,
            ),
            ("send.senders", self.send.senders.into(), 1024),
            (
                "send.max_response_bytes",
                self.send.max_response_bytes as u64,
                64 << 20,
            ),
            ("claim.batch_size", c.batch_size.into(), 100_000),
            (
                "claim.per_destination_cap",
                c.per_destination_cap.into(),
                100_000,
            ),
            ("claim.busy_poll_ms", c.busy_poll_ms, 3_600_000),
            ("claim.idle_poll_ms", c.idle_poll_ms, 3_600_000),
            ("retry.backoff_base_ms", r.backoff_base_ms, YEAR_S * 1000),
            ("retry.backoff_cap_seconds", r.backoff_cap_seconds, YEAR_S),
            (
                "retry.max_server_delay_seconds",
                r.max_server_delay_seconds,
                YEAR_S,
            ),
            ("retry.horizon_hours", r.horizon_hours, 10 * YEAR_S / 3600),
            ("shutdown.grace_ms", self.shutdown.grace_ms, 3_600_000),
            (
                "reconcile.interval_seconds",
                self.reconcile.interval_seconds,
                DAY_S,
            ),
            (
                "reconcile.older_than_seconds",
                self.reconcile.older_than_seconds,
                YEAR_S,
            ),
        ];
        for (key, value, max) in bounds {
            if value > max {
                return Err(invalid(key, format!("must be at most {max}")));
            }
        }
        let limits =
            std::iter::once(&self.throttle.default).chain(self.throttle.destinations.values());
        for l in limits {
            if l.rate_per_second > 1e6 || l.burst > 1_000_000 || l.max_in_flight > 1_000_000 {
                return Err(invalid(
                    "throttle",
                    "rate_per_second, burst and max_in_flight must each be at most 1000000",
                ));
            }
        }
        Ok(())
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

    pub fn consumer_id(&self) -> String {
        self.consumer_id.clone().unwrap_or_else(|| {
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
mod tests {
    use super::*;

    #[test]
    fn the_example_file_is_valid_and_matches_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/remit.example.toml");
        let from_file: Config = Figment::from(Serialized::defaults(Config::default()))
            .merge(Toml::file_exact(&path))
            .extract()
            .unwrap();
        from_file.validate().unwrap();
        assert_eq!(
            serde_json::to_value(&from_file).unwrap(),
            serde_json::to_value(Config::default()).unwrap(),
            "the example documents the defaults"
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        let mut config = Config::default();
        config.send.timeout_ms = config.lease.seconds * 1000;
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("send.timeout_ms"));
        let mut config = Config::default();
        config.throttle.default.rate_per_second = 0.0;
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("throttle.default.rate_per_second"));
        let mut config = Config::default();
        config.retry.retryable_statuses.push(700);
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .contains("retryable_statuses"));
        let mut config = Config::default();
        config.send.allow_hosts = vec!["127.0.0.0/8".into(), "10.0.0.0/40".into()];
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.contains("send.allow_hosts") && err.contains("10.0.0.0/40"),
            "{err}"
        );
        let mut config = Config::default();
        config.api.pool_size = 0;
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.contains("api.pool_size") && err.contains("at least 1"),
            "{err}"
        );
    }

    #[test]
    fn values_too_large_for_arithmetic_are_refused_by_name() {
        let mut config = Config::default();
        config.retry.max_server_delay_seconds = u64::MAX;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("retry.max_server_delay_seconds"), "{err}");
        let mut config = Config::default();
        config.lease.seconds = u64::MAX;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("lease.seconds"), "{err}");
        let mut config = Config::default();
        config.send.timeout_ms = u64::MAX;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("send.timeout_ms"), "{err}");
        // The largest accepted values still make a working policy.
        let mut config = Config::default();
        config.retry.max_server_delay_seconds = 365 * 24 * 3600;
        config.retry.backoff_cap_seconds = 365 * 24 * 3600;
        config.retry.horizon_hours = 10 * 365 * 24;
        config.validate().unwrap();
        let policy = config.retry_policy();
        let observed = remit::policy::Observed {
            attempt: 1,
            retry_horizon_at: chrono::DateTime::<chrono::Utc>::MAX_UTC,
            started_at: chrono::Utc::now(),
            received_at: chrono::Utc::now(),
            server_date: None,
            response: Ok((429, Some("99999999999999999999".into()))),
        };
        let decision = remit::policy::decide(&observed, &policy, &mut rand::rng());
        assert!(decision.retry_delay().is_some());
    }

    #[test]
    fn a_file_with_an_unknown_key_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("remit-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.toml");
        std::fs::write(&path, "[lease]\nsecondz = 3\n").unwrap();
        let err = Config::load(Some(&path)).unwrap_err().to_string();
        assert!(err.contains("secondz"), "{err}");
    }
}
