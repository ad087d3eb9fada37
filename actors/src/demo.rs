//! `remit demo`: remit's whole job on one machine, with nothing to set up.
//! In a sandbox (a SQLite file in a temporary directory or, with
//! `--database-url`, a schema of its own in that PostgreSQL), removed
//! afterwards, it
//! starts a local receiver that answers each webhook's first request with
//! `429 Retry-After: 1`, schedules three webhooks, runs the region's
//! runtime until all are delivered, and prints what happened.

use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use chrono::Utc;
use parking_lot::Mutex;
use remit::domain::{
    DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TaskState, TenantId,
};
use remit::payload_crypto::PayloadKey;
use remit::store::{Sandbox, Store};

use crate::app::{self, AppError, Runtime};
use crate::config::Config;

const WEBHOOKS: usize = 3;

/// What the demo receiver has seen: idempotency keys, in order.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

async fn receive(request: HttpRequest, seen: web::Data<Seen>) -> HttpResponse {
    let key = request
        .headers()
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("?")
        .to_owned();
    let first = {
        let mut seen = seen.0.lock();
        let first = !seen.contains(&key);
        seen.push(key.clone());
        first
    };
    let at = Utc::now().format("%H:%M:%S%.3f");
    if first {
        println!("{at}  receiver: {key} -> 429 Retry-After: 1");
        HttpResponse::TooManyRequests()
            .insert_header(("retry-after", "1"))
            .finish()
    } else {
        println!("{at}  receiver: {key} -> 200");
        HttpResponse::Ok().finish()
    }
}

/// Runs the demo on a throwaway SQLite file, or in a sandbox inside the
/// database `database_url` names.
pub async fn run(mut config: Config, database_url: Option<String>) -> Result<(), AppError> {
    app::install_crypto_provider();
    let name = format!(
        "remit_demo_{}_{:08x}",
        std::process::id(),
        rand::random::<u32>()
    );
    let sandbox = Sandbox::create(database_url.as_deref(), &name).await?;
    println!("database: {} (removed afterwards)", sandbox.describe());
    let result = demo(&mut config, &sandbox.url).await;
    sandbox.remove().await?;
    result
}

async fn demo(config: &mut Config, url: &str) -> Result<(), AppError> {
    config.database.url = url.to_owned();
    config.region = "us".into();
    config.consumer_id = Some("demo".into());
    config.api.bind = "127.0.0.1:0".into();
    config.claim.idle_poll_ms = 100;
    let key = app::payload_key(config).unwrap_or_else(|_| PayloadKey::from_bytes(rand::random()));
    let store = app::connect(config, key).await?;

    let seen = web::Data::new(Seen::default());
    let server_seen = seen.clone();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(server_seen.clone())
            .default_service(web::to(receive))
    })
    .workers(1)
    .disable_signals()
    .bind("127.0.0.1:0")
    .map_err(|source| AppError::Bind {
        addr: "127.0.0.1:0".into(),
        source,
    })?;
    let receiver = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);

    // The receiver is on loopback, which remit refuses unless allowlisted:
    // open exactly its address (and plain http to it) for this run.
    config.send.allow_hosts.push(receiver.ip().to_string());
    let destination = DestinationId::new("demo-receiver")?;
    let url = format!("http://{receiver}/webhooks");
    store
        .add_destination(NewDestination::new(
            destination.clone(),
            Region::US,
            &url,
            None,
        )?)
        .await?;
    println!("receiver listening on {url}");
    let mut tasks = Vec::new();
    for n in 1..=WEBHOOKS {
        let scheduled = store
            .schedule(NewTask {
                tenant_id: TenantId::new("demo-clinic")?,
                reminder_id: ReminderId::new(&format!("renewal-{n}"))?,
                destination_id: destination.clone(),
                region: Region::US,
                not_before: Utc::now(),
                retry_horizon: chrono::Duration::hours(1),
                payload: Payload::json(format!(r#"{{"renewal":{n}}}"#)),
            })
            .await?;
        println!(
            "scheduled {} with key {}",
            scheduled.task.id, scheduled.task.idempotency_key
        );
        tasks.push(scheduled.task.id);
    }

    let log = slog::Logger::root(slog::Discard, slog::o!());
    let runtime = Runtime::start(config.clone(), store.clone(), log).await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut delivered = 0;
        for id in &tasks {
            if store
                .task(*id)
                .await?
                .is_some_and(|t| t.state == TaskState::Delivered)
            {
                delivered += 1;
            }
        }
        if delivered == tasks.len() || Instant::now() > deadline {
            break;
        }
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    runtime.shutdown().await;
    handle.stop(true).await;

    println!("\nattempt log:");
    let mut all_delivered = true;
    for id in &tasks {
        let task = store.task(*id).await?;
        let state = task.map_or("missing", |t| t.state.as_str());
        all_delivered &= state == "delivered";
        println!("  {id}: {state}");
        for attempt in store.attempts(*id).await? {
            let mut line = format!(
                "    attempt {} {}",
                attempt.attempt_number,
                attempt.outcome.as_str()
            );
            if let Some(status) = attempt.observed.http_status {
                line += &format!(", status {status}");
            }
            if let Some(raw) = &attempt.observed.retry_after_raw {
                line += &format!(", Retry-After {raw}");
            }
            if let Some(next) = attempt.next_available_at {
                line += &format!(", due again {}", next.format("%H:%M:%S%.3f"));
            }
            println!("{line}");
        }
    }
    println!(
        "\n{} requests reached the receiver for {} webhooks",
        seen.0.lock().len(),
        tasks.len()
    );
    if all_delivered {
        Ok(())
    } else {
        Err(AppError::DemoIncomplete)
    }
}
