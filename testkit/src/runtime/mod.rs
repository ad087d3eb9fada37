//! What the runtime's end-to-end tests share: a database schema of their
//! own (or a PostgreSQL cluster of their own), the scriptable receiver,
//! and a runtime configured for quick tests.
//!
//! # Layout
//! - this file: a runtime and its configuration for quick tests, `remit`
//!   as a child process (`remit_command!`), tasks and destinations made
//!   in one line, and the waits the tests share.
//! - `receiver`: the scriptable webhook receiver; `quota_receiver`: one
//!   that enforces a quota; `pausing`: one that answers 429 with
//!   Retry-After; `hostile`: one that misbehaves on the wire.
//! - `standard_webhooks`: signatures checked by the public library.
//! - `otlp`: an OTLP/HTTP receiver for the tracing tests.
//! - `captured_log`: a logger that keeps every record.

pub mod captured_log;
pub mod hostile;
pub mod otlp;
pub mod pausing;
pub mod quota_receiver;
pub mod receiver;
pub mod standard_webhooks;

pub use crate::{cluster, db, pgbouncer};

use remit::store::{Database, Destinations, Schedule};
use std::time::Duration;

use chrono::{DateTime, Utc};
use remit::domain::{
    DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TaskId, TaskState,
    TenantId,
};
use remit_actors::app::Runtime;
use remit_actors::config::Config;

pub use db::{claim, delivered, retry_at, t0, Backend, TestDb};
pub use receiver::{Received, Receiver, Reply, RetryAfter};

pub const API_TOKEN: &str = "test-token";

/// The test receiver is on loopback, which remit refuses unless allowlisted.
pub const ALLOW_HOSTS: [&str; 3] = ["127.0.0.0/8", "::1", "localhost"];
/// The same allowlist as the environment spells it.
pub const ALLOW_HOSTS_ENV: &str = r#"["127.0.0.0/8","::1","localhost"]"#;

/// The `remit` binary with a clean environment pointed at the test's
/// schema, the test key, a free API port and quiet JSON logs. Only test
/// binaries of this package can name it.
#[macro_export]
macro_rules! remit_command {
    ($db:expr) => {{
        use base64::Engine as _;
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_remit"));
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", &$db.url)
            .env(
                "REMIT_PAYLOAD_KEY",
                base64::engine::general_purpose::STANDARD.encode([7u8; 32]),
            )
            .env("REMIT_API__BIND", "127.0.0.1:0")
            .env("REMIT_SEND__ALLOW_HOSTS", $crate::runtime::ALLOW_HOSTS_ENV)
            .env("REMIT_LOG__FORMAT", "json")
            .env("REMIT_LOG__LEVEL", "warning")
            .stdin(std::process::Stdio::null());
        command
    }};
}

/// Quick settings: short lease, fast polling, API on a free port.
pub fn config(db: &TestDb, region: Region, lease_owner: &str) -> Config {
    config_for_url(&db.url, region, lease_owner)
}

/// As [`config`], for a database the test reaches by URL.
pub fn config_for_url(url: &str, region: Region, lease_owner: &str) -> Config {
    let mut config = Config {
        region: region.as_str().into(),
        lease_owner: Some(lease_owner.into()),
        ..Config::default()
    };
    config.database.url = url.to_owned();
    config.database.pool_size = 4;
    config.lease.seconds = 10;
    config.send.timeout_ms = 2_000;
    config.claim.busy_poll_ms = 10;
    config.claim.idle_poll_ms = 100;
    config.api.bind = "127.0.0.1:0".into();
    config.api.token = Some(API_TOKEN.into());
    config.send.allow_hosts = ALLOW_HOSTS.map(str::to_owned).to_vec();
    config.shutdown.grace_ms = 2_000;
    config
}

pub fn logger() -> slog::Logger {
    slog::Logger::root(slog::Discard, slog::o!())
}

/// Any store will do: `&db.store` of a PostgreSQL or a SQLite test database.
pub async fn start(config: Config, store: &(impl Clone + Into<Database>)) -> Runtime {
    start_skewed(config, store, chrono::Duration::zero()).await
}

/// A runtime whose wall clock is `skew` off this host's (negative: behind).
pub async fn start_skewed(
    config: Config,
    store: &(impl Clone + Into<Database>),
    skew: chrono::Duration,
) -> Runtime {
    remit_actors::app::install_crypto_provider();
    let wall = remit_actors::runtime::WallClock::skewed(skew);
    Runtime::start_with_clock(config, store.clone().into(), logger(), wall)
        .await
        .expect("the runtime starts")
}

pub async fn destination(
    db: &TestDb,
    id: &str,
    region: Region,
    url: &str,
    secret: Option<&str>,
) -> DestinationId {
    let id = DestinationId::new(id).unwrap();
    db.store
        .add_destination(
            NewDestination::new(id.clone(), region, url, secret.map(str::to_owned)).unwrap(),
        )
        .await
        .unwrap();
    id
}

/// A task due now (the database's clock decides), with a body naming it.
pub async fn task(
    db: &TestDb,
    reminder: &str,
    destination: &DestinationId,
    region: Region,
) -> TaskId {
    task_at(db, reminder, destination, region, Utc::now()).await
}

pub async fn task_at(
    db: &TestDb,
    reminder: &str,
    destination: &DestinationId,
    region: Region,
    not_before: DateTime<Utc>,
) -> TaskId {
    schedule(
        db,
        new_task(reminder, destination, region, not_before, None),
    )
    .await
}

/// A task due at `not_before` in the line `key`: sent only after every
/// earlier task of its destination and key has ended.
pub async fn task_in_line(
    db: &TestDb,
    reminder: &str,
    destination: &DestinationId,
    region: Region,
    not_before: DateTime<Utc>,
    key: &str,
) -> TaskId {
    let key = remit::domain::OrderingKey::new(key).unwrap();
    let new = new_task(reminder, destination, region, not_before, Some(key));
    schedule(db, new).await
}

fn new_task(
    reminder: &str,
    destination: &DestinationId,
    region: Region,
    not_before: DateTime<Utc>,
    ordering_key: Option<remit::domain::OrderingKey>,
) -> NewTask {
    NewTask {
        tenant_id: TenantId::new("clinic-1").unwrap(),
        reminder_id: ReminderId::new(reminder).unwrap(),
        destination_id: destination.clone(),
        region,
        not_before,
        retry_horizon: chrono::Duration::hours(1),
        payload: Payload::json(format!(r#"{{"reminder":"{reminder}"}}"#)),
        ordering_key,
        traceparent: None,
    }
}

async fn schedule(db: &TestDb, new: NewTask) -> TaskId {
    db.store.schedule(new).await.unwrap().task.id
}

/// Waits until the runtime's metrics show `line` (a periodic gauge is read
/// on its own schedule, not when a task moves), and returns the exposition.
pub async fn wait_for_series(runtime: &Runtime, line: &str, within: Duration) -> String {
    let deadline = std::time::Instant::now() + within;
    loop {
        let series = runtime.stats().metrics.encode();
        if series.contains(line) {
            return series;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {line} after {within:?}:\n{series}"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until every task is in `state`, checking the database as the
/// runtime moves them.
pub async fn wait_for_state(db: &TestDb, tasks: &[TaskId], state: TaskState, within: Duration) {
    let deadline = std::time::Instant::now() + within;
    loop {
        let mut pending = 0;
        for id in tasks {
            if db.store.task(*id).await.unwrap().unwrap().state != state {
                pending += 1;
            }
        }
        if pending == 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{pending} of {} tasks not {state:?} after {within:?}",
            tasks.len()
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}
