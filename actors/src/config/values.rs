//! The configuration as read, every field with a default, and what each
//! part of remit reads from it.

use std::collections::BTreeMap;

use remit::domain::{DestinationId, DestinationSettings, Region};
use remit::policy::RetryPolicy;
use serde::{Deserialize, Serialize};

use super::error::{invalid, ConfigError};
use super::sections::{
    ApiConfig, ClaimConfig, ConsoleConfig, ConsoleListener, DatabaseConfig, DestinationsConfig,
    EventsConfig, LeaseConfig, LogConfig, LogFormat, MetricsConfig, PoolerMode, ReconcileConfig,
    RetentionConfig, RetryConfig, SendConfig, ShutdownConfig, ThrottleConfig, ThrottleLimits,
    TracingConfig,
};
use crate::egress::{AllowList, Egress};

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
    pub console: ConsoleConfig,
    pub destinations: DestinationsConfig,
    pub events: EventsConfig,
    pub tracing: TracingConfig,
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
                read_url: None,
                read_pool_size: 2,
                read_pooler: None,
                pooler: PoolerMode::None,
                direct_url: None,
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
                summary_seconds: 60,
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
            console: ConsoleConfig {
                enabled: true,
                listener: ConsoleListener::Api,
                session_minutes: 60,
                secure_cookie: false,
                sign_in_failures: 5,
                sign_in_window_seconds: 300,
                sign_in_lockout_seconds: 300,
            },
            retention: RetentionConfig {
                enabled: true,
                keep_days: 30,
                batch_size: 500,
                interval_seconds: 300,
                audit_keep_days: 365,
                stats_keep_days: 7,
            },
            destinations: DestinationsConfig {
                disable_after_seconds: 24 * 3600,
                disable_after_failures: 20,
            },
            events: EventsConfig {
                url: None,
                secret: None,
                poll_ms: 1_000,
                check_interval_ms: 5_000,
                late_after_seconds: 300,
                horizon_warning_seconds: 3_600,
                window_seconds: 300,
                failing_percents: vec![50, 90],
                sample_size: 10,
            },
            tracing: TracingConfig {
                otlp_endpoint: None,
                service_name: "remit".into(),
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

impl Config {
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

    /// A destination's limits: each set through the API wins over the
    /// file's entry for the destination, which wins over the file's
    /// default.
    pub fn limits_of(
        &self,
        destination: &DestinationId,
        settings: &DestinationSettings,
    ) -> ThrottleLimits {
        let file = self.throttle_for(destination);
        ThrottleLimits {
            rate_per_second: settings.rate_per_second.unwrap_or(file.rate_per_second),
            burst: settings.burst.unwrap_or(file.burst),
            max_in_flight: settings.max_in_flight.unwrap_or(file.max_in_flight),
        }
    }
}
