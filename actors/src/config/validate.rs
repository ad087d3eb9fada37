//! Checking a configuration before anything runs: every value that feeds
//! arithmetic is bounded, and a bad one names its key (exit 2).

use remit::domain::PruneRequest;

use super::error::{invalid, ConfigError};
use super::sections::PoolerMode;
use super::values::Config;

impl Config {
    /// Where the database is, without any password, for the first log
    /// line and for status output.
    pub fn database_description(&self) -> String {
        remit::store::DatabaseUrl::parse(&self.database.url)
            .map(|url| url.describe())
            .unwrap_or_else(|e| e.to_string())
    }

    /// True when neither DATABASE_URL nor the configuration named one, so
    /// remit runs on `sqlite://remit.db` in the working directory.
    pub fn database_is_default(&self) -> bool {
        self.database.url == remit::store::DEFAULT_DATABASE_URL
    }

    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        self.region()?;
        let url = remit::store::DatabaseUrl::parse(&self.database.url)
            .map_err(|e| invalid("database.url", e.reason))?;
        let postgres = matches!(url, remit::store::DatabaseUrl::Postgres(_));
        if let Some(read_url) = &self.database.read_url {
            let read = remit::store::DatabaseUrl::parse(read_url)
                .map_err(|e| invalid("database.read_url", e.reason))?;
            if !postgres || !matches!(read, remit::store::DatabaseUrl::Postgres(_)) {
                return Err(invalid(
                    "database.read_url",
                    "a replica of PostgreSQL (postgres://…), with database.url a PostgreSQL too",
                ));
            }
        }
        if self.database.read_pooler.is_some() && self.database.read_url.is_none() {
            return Err(invalid(
                "database.read_pooler",
                "it says what stands in front of database.read_url, which is not set",
            ));
        }
        if self.database.pooler != PoolerMode::None && !postgres {
            return Err(invalid(
                "database.pooler",
                "a pooler stands in front of PostgreSQL: database.url must be a postgres:// URL",
            ));
        }
        if let Some(direct) = &self.database.direct_url {
            if !matches!(
                remit::store::DatabaseUrl::parse(direct),
                Ok(remit::store::DatabaseUrl::Postgres(_))
            ) {
                return Err(invalid(
                    "database.direct_url",
                    "must be a postgres:// URL of PostgreSQL itself",
                ));
            }
        }
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
            ("database.read_pool_size", self.database.read_pool_size),
            ("api.pool_size", self.api.pool_size),
            ("retry.max_attempts", self.retry.max_attempts),
            (
                "destinations.disable_after_failures",
                self.destinations.disable_after_failures,
            ),
        ] {
            if value == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }
        if self.destinations.disable_after_seconds > remit::domain::MAX_DISABLE_AFTER_SECONDS as u64
        {
            return Err(invalid(
                "destinations.disable_after_seconds",
                format!(
                    "must be at most {} (ten years)",
                    remit::domain::MAX_DISABLE_AFTER_SECONDS
                ),
            ));
        }
        if let Some(url) = &self.events.url {
            // The destination the event relay will register, checked now
            // so a bad URL stops the start rather than every poll.
            let region = self.region()?;
            let id = crate::events_destination::events_destination_id(
                region,
                url,
                self.events.secret.as_deref(),
            )
            .map_err(|e| invalid("events.url", e.reason))?;
            remit::domain::NewDestination::new(id, region, url, None)
                .map_err(|e| invalid("events.url", e.reason))?;
        }
        if let Some(secret) = &self.events.secret {
            crate::signature::secret_key(secret)
                .map_err(|e| invalid("events.secret", e.to_string()))?;
        }
        if !(10..=3_600_000).contains(&self.events.poll_ms) {
            return Err(invalid("events.poll_ms", "must be between 10 and 3600000"));
        }
        self.alerts_within_bounds()?;
        self.retention_within_bounds()?;
        if !(1..=86_400).contains(&self.metrics.queue_interval_seconds) {
            return Err(invalid(
                "metrics.queue_interval_seconds",
                "must be between 1 and 86400",
            ));
        }
        if let Some(bind) = &self.metrics.bind {
            let port = bind.rsplit_once(':').map(|(_, port)| port.parse::<u16>());
            if !matches!(port, Some(Ok(_))) {
                return Err(invalid(
                    "metrics.bind",
                    "must be HOST:PORT, e.g. 0.0.0.0:9464",
                ));
            }
            // Two listeners on port 0 each get a free port of their own.
            if bind == &self.api.bind && !bind.ends_with(":0") {
                return Err(invalid(
                    "metrics.bind",
                    "must differ from api.bind (leave it unset to serve /metrics with the API)",
                ));
            }
        }
        self.console_within_bounds()?;
        if self.metrics.max_destinations > 10_000 {
            return Err(invalid(
                "metrics.max_destinations",
                "must be at most 10000 (each is a series per family)",
            ));
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
        self.otlp_traces_url()?;
        if self.tracing.service_name.trim().is_empty() {
            return Err(invalid("tracing.service_name", "must not be blank"));
        }
        Ok(())
    }

    /// The URL spans are posted to, when tracing is on: `otlp_endpoint`,
    /// with `/v1/traces` when its path is `/` (the collector's base URL,
    /// as OpenTelemetry's own variables take it).
    pub fn otlp_traces_url(&self) -> Result<Option<url::Url>, ConfigError> {
        let Some(endpoint) = &self.tracing.otlp_endpoint else {
            return Ok(None);
        };
        let accepted = "accepted: an http:// or https:// URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318";
        let mut url = url::Url::parse(endpoint)
            .map_err(|e| invalid("tracing.otlp_endpoint", format!("{e}; {accepted}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(invalid(
                "tracing.otlp_endpoint",
                format!("{} is not one; {accepted}", remit::domain::quoted(endpoint)),
            ));
        }
        if url.path() == "/" {
            url.set_path("/v1/traces");
        }
        Ok(Some(url))
    }

    /// A session lasts between a minute and a day, the limit on failed
    /// sign-ins is a limit (at least one failure, at most a day's window
    /// and lockout), and the console's listener exists.
    fn console_within_bounds(&self) -> Result<(), ConfigError> {
        let c = &self.console;
        if !(1..=1440).contains(&c.session_minutes) {
            return Err(invalid(
                "console.session_minutes",
                "must be between 1 and 1440 (a day)",
            ));
        }
        if !(1..=1000).contains(&c.sign_in_failures) {
            return Err(invalid(
                "console.sign_in_failures",
                "must be between 1 and 1000",
            ));
        }
        for (key, seconds) in [
            ("console.sign_in_window_seconds", c.sign_in_window_seconds),
            ("console.sign_in_lockout_seconds", c.sign_in_lockout_seconds),
        ] {
            if !(1..=86_400).contains(&seconds) {
                return Err(invalid(key, "must be between 1 and 86400 (a day)"));
            }
        }
        if self.console.enabled
            && self.console.listener == super::ConsoleListener::Metrics
            && self.metrics.bind.is_none()
        {
            return Err(invalid(
                "console.listener",
                "is \"metrics\" but metrics.bind is not set; set metrics.bind or use \"api\"",
            ));
        }
        Ok(())
    }

    /// A run deletes in bounded batches, never right after a task ends, and
    /// never spins.
    fn retention_within_bounds(&self) -> Result<(), ConfigError> {
        let r = &self.retention;
        let bounds: [(&str, u64, u64); 5] = [
            (
                "retention.keep_days",
                r.keep_days,
                PruneRequest::MAX_AGE_DAYS.unsigned_abs(),
            ),
            (
                "retention.audit_keep_days",
                r.audit_keep_days,
                PruneRequest::MAX_AGE_DAYS.unsigned_abs(),
            ),
            (
                "retention.stats_keep_days",
                r.stats_keep_days,
                PruneRequest::MAX_AGE_DAYS.unsigned_abs(),
            ),
            (
                "retention.batch_size",
                r.batch_size.into(),
                PruneRequest::MAX_BATCH_SIZE.into(),
            ),
            ("retention.interval_seconds", r.interval_seconds, 24 * 3600),
        ];
        for (key, value, max) in bounds {
            if !(1..=max).contains(&value) {
                return Err(invalid(key, format!("must be between 1 and {max}")));
            }
        }
        Ok(())
    }

    /// The alert check's settings: times within ten years, a window of at
    /// least a second, levels of the disable threshold below the disable
    /// itself (which `destination.disabled` reports), each once.
    fn alerts_within_bounds(&self) -> Result<(), ConfigError> {
        const TEN_YEARS_S: u64 = 315_360_000;
        let e = &self.events;
        let bounds: [(&str, u64, u64, u64); 5] = [
            (
                "events.check_interval_ms",
                e.check_interval_ms,
                10,
                3_600_000,
            ),
            (
                "events.late_after_seconds",
                e.late_after_seconds,
                1,
                TEN_YEARS_S,
            ),
            (
                "events.horizon_warning_seconds",
                e.horizon_warning_seconds,
                1,
                TEN_YEARS_S,
            ),
            ("events.window_seconds", e.window_seconds, 1, 7 * 24 * 3600),
            ("events.sample_size", e.sample_size.into(), 0, 100),
        ];
        for (key, value, min, max) in bounds {
            if !(min..=max).contains(&value) {
                return Err(invalid(key, format!("must be between {min} and {max}")));
            }
        }
        let levels = &e.failing_percents;
        let unique: std::collections::BTreeSet<_> = levels.iter().collect();
        if levels.len() > 10
            || unique.len() != levels.len()
            || levels.iter().any(|p| !(1..=99).contains(p))
        {
            return Err(invalid(
                "events.failing_percents",
                "must be at most 10 different whole percentages, each between 1 and 99",
            ));
        }
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
}
