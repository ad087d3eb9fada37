//! What the console's handlers share: its stores, its region, the session
//! key and sign-in guard, and the runtime's values shown beside a
//! destination's own.

use std::sync::Arc;

use actix_web::cookie::Key;
use remit::domain::Region;
use remit::payload_crypto::PayloadKey;
use remit::store::{Database, ReportReader};

use super::sign_in_guard::SignInGuard;
use super::sign_in_limit::LimitRule;
use crate::api::Caller;
use crate::config::{Config, ThrottleConfig};

/// What the console's handlers share.
#[derive(Clone)]
pub struct ConsoleState {
    /// A pool apart from delivery's (the API's, or the console's own).
    pub store: Database,
    /// Where the pages that only read (the overview, the destinations,
    /// the task search, the audit log, a destination's health) read:
    /// `database.read_url`'s replica, else `store`.
    pub reports: ReportReader,
    /// Whether `reports` is a replica (the overview says how far behind).
    pub replica: bool,
    /// The region whose tasks and destinations it shows.
    pub region: Region,
    /// The bootstrap token (`api.token`), admin.
    pub bootstrap: Option<String>,
    /// Seals the session cookie.
    pub key: Key,
    /// How long a sign-in lasts.
    pub session: chrono::Duration,
    /// Whether the session cookie is Secure whatever the connection
    /// (`console.secure_cookie`: a proxy ends TLS in front).
    pub secure_cookie: bool,
    /// Failed sign-ins per client address, and lockouts.
    pub sign_ins: SignInGuard,
    /// The fresh retry horizon a replayed task gets.
    pub horizon: chrono::Duration,
    /// The configured rates, shown beside what receivers announced.
    pub throttle: Arc<ThrottleConfig>,
    /// The runtime's values a destination's own settings replace.
    pub runtime: RuntimeDefaults,
    pub log: slog::Logger,
}

/// The configuration's values that a destination's own settings replace,
/// shown beside them.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeDefaults {
    pub timeout_ms: u64,
    pub max_attempts: u32,
    pub horizon_seconds: i64,
    pub late_after_seconds: Option<u64>,
    pub disable_after_seconds: u64,
    pub disable_after_failures: u32,
}

impl std::fmt::Debug for ConsoleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleState")
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

impl ConsoleState {
    /// The console of `config`'s region on `store`. The session key comes
    /// from the payload key when there is one, so that every process of a
    /// deployment accepts the others' cookies; otherwise it is random, and
    /// sessions last as long as the process.
    pub fn new(
        config: &Config,
        region: Region,
        store: Database,
        payload_key: Option<&PayloadKey>,
        log: slog::Logger,
    ) -> Self {
        let key = match payload_key {
            Some(payload_key) => Key::from(&payload_key.derive("remit console session v1")),
            None => Key::generate(),
        };
        Self {
            reports: ReportReader::on(store.clone()),
            replica: false,
            store,
            region,
            bootstrap: config.api.token.clone(),
            key,
            session: chrono::Duration::minutes(i64::from(config.console.session_minutes)),
            secure_cookie: config.console.secure_cookie,
            sign_ins: SignInGuard::new(LimitRule {
                failures: config.console.sign_in_failures,
                window: std::time::Duration::from_secs(config.console.sign_in_window_seconds),
                lockout: std::time::Duration::from_secs(config.console.sign_in_lockout_seconds),
            }),
            horizon: config.retry_policy().horizon,
            throttle: Arc::new(config.throttle.clone()),
            runtime: RuntimeDefaults {
                timeout_ms: config.send.timeout_ms,
                max_attempts: config.retry.max_attempts,
                horizon_seconds: config.retry_policy().horizon.num_seconds(),
                late_after_seconds: Some(config.events.late_after_seconds),
                disable_after_seconds: config.destinations.disable_after_seconds,
                disable_after_failures: config.destinations.disable_after_failures,
            },
            log,
        }
    }
}

impl ConsoleState {
    /// The store as the signed-in token (`caller`) acts: its admin calls
    /// record the token's id and name in the audit log, as the API's do.
    pub fn acting(&self, caller: &Caller) -> Database {
        self.store.acting_as(caller.actor())
    }
}
