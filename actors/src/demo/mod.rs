//! `remit demo`: remit's whole job on one machine, with nothing to set up.
//!
//! In a sandbox (a SQLite file in a temporary directory or, with
//! `--database-url`, a schema of its own in that PostgreSQL), removed
//! afterwards, it starts a local receiver that rate-limits each destination
//! (429 with Retry-After in both forms), answers 503 now and then and
//! slowly on one endpoint. It schedules a few thousand reminders for two
//! tenants across several destinations, with deadlines spread over the
//! next seconds, and runs a supervised region until every one is
//! delivered, showing progress as it goes. Midway it crashes a sender actor
//! and follows the tasks it held until they are delivered. At the end it
//! prints what the receiver saw. It succeeds only if every reminder was
//! delivered and no request broke a deadline.
//!
//! # Layout
//! - `receiver`: the local receiver that behaves like the hard ones.
//! - `progress`: the live progress bars, read from the database.
//! - `summary`: the closing report, and whether the demo succeeded.

mod progress;
mod receiver;
mod summary;

use remit::store::{Database, Destinations, Reports, Sandbox, Schedule};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use chrono::Utc;
use remit::domain::{
    DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TaskId, TaskState,
    TenantId,
};
use remit::payload_crypto::PayloadKey;

use crate::app::{self, AppError, Runtime};
use crate::config::{Config, ThrottleLimits};
use crate::words::counted;
use receiver::{Behaviour, Receiver};

/// Reminders scheduled, and over how long their deadlines spread.
const REMINDERS: usize = 2_000;
const SPREAD: Duration = Duration::from_secs(4);
const TENANTS: [&str; 2] = ["clinic-north", "clinic-south"];

/// The receiver's destinations and how each behaves.
fn destinations() -> Vec<(&'static str, Behaviour)> {
    let plain = Behaviour {
        per_second: None,
        unavailable_every: None,
        delay: Duration::ZERO,
    };
    vec![
        ("crm", plain),
        ("billing", plain),
        // Accept well under what remit is configured to send (and under the
        // 80 a second their share of the reminders falls due at), so 429s
        // come even when remit runs slowly on a loaded machine.
        (
            "pharmacy",
            Behaviour {
                per_second: Some(30),
                ..plain
            },
        ),
        (
            "lab",
            Behaviour {
                per_second: Some(30),
                ..plain
            },
        ),
        (
            "flaky",
            Behaviour {
                unavailable_every: Some(15),
                ..plain
            },
        ),
        (
            "slow",
            Behaviour {
                delay: Duration::from_millis(250),
                ..plain
            },
        ),
    ]
}

/// Runs the demo on a throwaway SQLite file, or in a sandbox inside the
/// database `database_url` names; it gives up (and fails) when not every
/// reminder is delivered `give_up_after` they were scheduled.
pub async fn run(
    mut config: Config,
    database_url: Option<String>,
    give_up_after: Duration,
) -> Result<(), AppError> {
    app::install_crypto_provider();
    let name = format!(
        "remit_demo_{}_{:08x}",
        std::process::id(),
        rand::random::<u32>()
    );
    let sandbox = Sandbox::create(database_url.as_deref(), &name).await?;
    println!("database: {} (removed afterwards)", sandbox.describe());
    let result = demo(&mut config, &sandbox.url, give_up_after).await;
    sandbox.remove().await?;
    result
}

async fn demo(config: &mut Config, url: &str, give_up_after: Duration) -> Result<(), AppError> {
    let behaviours = destinations();
    let receiver = Receiver::start(
        behaviours
            .iter()
            .map(|(name, b)| ((*name).to_owned(), *b))
            .collect(),
    )
    .map_err(|source| AppError::Bind {
        what: "the demo's receiver",
        addr: "127.0.0.1:0".into(),
        source,
    })?;
    configure(config, url, &receiver);
    let key = app::payload_key(config).unwrap_or_else(|_| PayloadKey::from_bytes(rand::random()));
    let store = app::connect(config, key).await?;
    let ids = register(&store, &receiver, &behaviours).await?;
    println!(
        "receiver on http://{}: {}, rate-limited, one answering 503 now and then, one slow",
        receiver.addr,
        counted(ids.len() as u64, "destination")
    );
    let started = Instant::now();
    let tasks = schedule(&store, &ids).await?;
    println!(
        "scheduled {} for {}, due over the next {} s",
        counted(tasks.len() as u64, "reminder"),
        counted(TENANTS.len() as u64, "tenant"),
        SPREAD.as_secs()
    );

    let log = slog::Logger::root(slog::Discard, slog::o!());
    let runtime = Runtime::start(config.clone(), store.clone(), log).await?;
    let bars = progress::Bars::new(tasks.len() as u64);
    let mut crashed: Option<Vec<TaskId>> = None;
    let mut crash_tries = 0;
    let outcome = loop {
        let status = store.status(Some(Region::US)).await?;
        let region = status.regions.first().cloned().unwrap_or_default();
        bars.show(&region, receiver.seen().rate_limited());
        let delivered = region.delivered as usize;
        if crashed.is_none() && delivered * 3 >= tasks.len() && crash_tries < 10 {
            // A third of the way: crash a sender while it holds work (a
            // few tries, half a second apart, so an idle sender is not
            // restarted over and over).
            crash_tries += 1;
            let held = runtime.crash_a_sender().await;
            if !held.is_empty() {
                bars.println(&format!(
                    "crashed sender-0 while it held {} {}; they go back to the database",
                    held.len(),
                    if held.len() == 1 { "task" } else { "tasks" }
                ));
                crashed = Some(held);
            } else {
                actix_rt::time::sleep(Duration::from_millis(400)).await;
            }
        }
        if delivered + region.failed as usize == tasks.len() {
            break Ok(());
        }
        if started.elapsed() > give_up_after {
            break Err(AppError::DemoIncomplete);
        }
        actix_rt::time::sleep(Duration::from_millis(100)).await;
    };
    bars.finish();
    runtime.shutdown().await;
    let elapsed = started.elapsed();
    let seen = receiver.seen();
    receiver.stop().await;
    let report = summary::Report::gather(&store, &tasks, crashed, seen, elapsed).await?;
    print!("{}", report.text());
    outcome?;
    if report.all_delivered() && report.kept_every_deadline() {
        Ok(())
    } else {
        Err(AppError::DemoIncomplete)
    }
}

/// A runtime for the demo: one region, short leases, the receiver's
/// loopback address allowed, and every destination throttled to 100
/// requests a second, a little above what two of them accept.
fn configure(config: &mut Config, url: &str, receiver: &Receiver) {
    config.database.url = url.to_owned();
    config.region = "us".into();
    config.lease_owner = Some("demo".into());
    config.api.bind = "127.0.0.1:0".into();
    // /metrics with the API: a metrics.bind meant for a real process must
    // not be taken by the demo.
    config.metrics.bind = None;
    config.claim.idle_poll_ms = 50;
    config.claim.busy_poll_ms = 5;
    config.lease.seconds = 4;
    config.send.timeout_ms = 2_000;
    config.retry.backoff_base_ms = 200;
    config.retry.backoff_cap_seconds = 2;
    config.metrics.queue_interval_seconds = 1;
    config.throttle.default = ThrottleLimits {
        rate_per_second: 100.0,
        burst: 20,
        max_in_flight: 16,
    };
    // The receiver is on loopback, which remit refuses unless allowlisted:
    // open exactly its address (and plain http to it) for this run.
    config.send.allow_hosts.push(receiver.addr.ip().to_string());
}

async fn register(
    store: &Database,
    receiver: &Receiver,
    behaviours: &[(&str, Behaviour)],
) -> Result<Vec<DestinationId>, AppError> {
    let mut ids = Vec::new();
    for (name, _) in behaviours {
        let id = DestinationId::new(name)?;
        let url = format!("http://{}/d/{name}", receiver.addr);
        store
            .add_destination(NewDestination::new(id.clone(), Region::US, &url, None)?)
            .await?;
        ids.push(id);
    }
    Ok(ids)
}

/// The reminders, with deadlines spread evenly over the next seconds; each
/// payload names its deadline so the receiver can check it.
async fn schedule(
    store: &Database,
    destinations: &[DestinationId],
) -> Result<HashMap<TaskId, TaskState>, AppError> {
    let start = Utc::now();
    let step = SPREAD.as_micros() as i64 / REMINDERS as i64;
    let mut batch = Vec::with_capacity(REMINDERS);
    for n in 0..REMINDERS {
        let due = start + chrono::Duration::microseconds(step * n as i64);
        let tenant = TENANTS[n % TENANTS.len()];
        batch.push(NewTask {
            traceparent: None,
            tenant_id: TenantId::new(tenant)?,
            reminder_id: ReminderId::new(&format!("renewal-{n}"))?,
            destination_id: destinations[n % destinations.len()].clone(),
            region: Region::US,
            not_before: due,
            retry_horizon: chrono::Duration::hours(1),
            payload: Payload::json(format!(
                r#"{{"tenant":"{tenant}","renewal":{n},"due_ms":{}}}"#,
                due.timestamp_millis()
            )),
            ordering_key: None,
        });
    }
    let mut tasks = HashMap::new();
    for chunk in batch.chunks(500) {
        for answer in store.schedule_many(chunk.to_vec()).await? {
            let scheduled = answer?;
            tasks.insert(scheduled.task.id, scheduled.task.state);
        }
    }
    Ok(tasks)
}
