//! The SQL-only ceiling: the runtime's claim and finish statements with
//! its batch sizes and connections, and nothing else (no HTTP, no actors,
//! no payload reads). Consumers loop on `claim_due` and commit each claimed
//! batch with one `finish_many`, as fast as PostgreSQL lets them, on a
//! fresh schema holding the run's tasks. End-to-end throughput over this is
//! the share of the database's pace the whole runtime achieves.

use remit::store::{
    ClaimRequest, Destinations, Finish, Leases, PgConfig, PgStore, Schedule, TransitionOutcome,
};
use std::time::Instant;

use chrono::{Duration, Utc};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use remit::domain::{
    AttemptRecord, DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TenantId,
};
use remit::payload_crypto::PayloadKey;
use remit::policy::{Decision, Transition};

use crate::error::LoadError;

/// What the ceiling is measured with.
#[derive(Debug, Clone)]
pub struct CeilingSetup {
    pub tasks: usize,
    pub destinations: usize,
    pub payload_bytes: usize,
    pub consumers: u32,
    pub batch: u32,
    pub per_destination_cap: u32,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Ceiling {
    pub deliveries: usize,
    pub seconds: f64,
    pub per_s: f64,
    pub consumers: u32,
    /// WAL the server wrote while the consumers ran, per finish.
    pub wal_bytes_per_finish: f64,
    /// `n_tup_hot_upd / n_tup_upd` of the ceiling's `tasks` at the end.
    pub hot_update_share: Option<f64>,
}

/// Measures on a fresh schema at `url` (already migrated), on a
/// multi-threaded runtime of its own like benches/claim_finish.rs, so the
/// consumers are not held back by the harness's single-threaded one.
pub fn measure(url: String, setup: CeilingSetup) -> Result<Ceiling, LoadError> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(LoadError::io("starting the ceiling's runtime"))?;
        runtime.block_on(run(&url, &setup))
    })
    .join()
    .map_err(|_| LoadError::Setup("the ceiling's thread panicked".into()))?
}

async fn run(url: &str, setup: &CeilingSetup) -> Result<Ceiling, LoadError> {
    let mut config = PgConfig::new(url);
    config.pool_size = setup.consumers + 1;
    let store = PgStore::connect(&config, PayloadKey::from_bytes([3; 32])).await?;
    seed(&store, url, setup).await?;
    let mut observer = AsyncPgConnection::establish(url).await?;
    let wal_before = crate::database::wal_position(&mut observer).await?;

    let started = Instant::now();
    let consumers: Vec<_> = (0..setup.consumers)
        .map(|n| {
            let store = store.clone();
            let request = ClaimRequest {
                region: Region::EU,
                lease_owner: format!("ceiling-{n}"),
                lease: Duration::seconds(60),
                limit: setup.batch,
                per_destination_cap: setup.per_destination_cap,
                caps: Vec::new(),
                skip: Vec::new(),
                resume_after: None,
            };
            tokio::spawn(async move { consume(&store, request).await })
        })
        .collect();
    let mut deliveries = 0;
    for consumer in consumers {
        deliveries += consumer
            .await
            .map_err(|e| LoadError::Setup(format!("a ceiling consumer panicked: {e}")))??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let wal = crate::database::wal_position(&mut observer).await? - wal_before;
    // The statistics reach the view once the consumers' backends report,
    // which they do as they exit.
    drop(store);
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let hot_update_share = crate::database::hot_update_share(&mut observer).await?;
    if deliveries != setup.tasks {
        eprintln!(
            "ceiling: {deliveries} of {} tasks finished (a fenced finish or a lost row)",
            setup.tasks
        );
    }
    Ok(Ceiling {
        deliveries,
        seconds,
        per_s: deliveries as f64 / seconds,
        consumers: setup.consumers,
        wal_bytes_per_finish: wal as f64 / deliveries.max(1) as f64,
        hot_update_share,
    })
}

/// Claims and finishes until a claim comes back empty; returns the
/// finishes that applied.
async fn consume(store: &PgStore, mut request: ClaimRequest) -> Result<usize, LoadError> {
    let mut done = 0;
    loop {
        let claimed = store.claim_due(&request).await?;
        if claimed.is_empty() {
            return Ok(done);
        }
        // Each claim resumes the turn over the destinations, as the
        // runtime's claimer does.
        request.resume_after = request.resume_point(&claimed);
        let now = Utc::now();
        let batch: Vec<Finish> = claimed
            .iter()
            .map(|c| Finish {
                lease: c.lease(),
                destination: c.task.destination_id.clone(),
                decision: Decision {
                    transition: Transition::Deliver,
                    pause_destination_until: None,
                    record: AttemptRecord {
                        started_at: Some(now),
                        received_at: Some(now),
                        http_status: Some(200),
                        ..AttemptRecord::default()
                    },
                },
            })
            .collect();
        let outcomes = store.finish_many(&batch).await?.outcomes;
        done += outcomes
            .iter()
            .filter(|o| **o == TransitionOutcome::Applied)
            .count();
    }
}

/// The run's destinations and tasks (same count, same spread, payloads of
/// the same size, all due now), written through the store in batches and
/// analyzed, as the run's own backlog is before its drain.
async fn seed(store: &PgStore, url: &str, setup: &CeilingSetup) -> Result<(), LoadError> {
    for n in 0..setup.destinations {
        let id = DestinationId::new(&format!("d{n}")).map_err(invalid)?;
        let new = NewDestination::new(id, Region::EU, &format!("http://127.0.0.1:9/d/{n}"), None)
            .map_err(invalid)?;
        store.add_destination(new).await?;
    }
    let due = Utc::now() - Duration::seconds(1);
    let pad = "x".repeat(setup.payload_bytes.saturating_sub(45));
    let tenant = TenantId::new("load").map_err(invalid)?;
    for start in (0..setup.tasks).step_by(1_000) {
        let mut batch = Vec::new();
        for i in start..(start + 1_000).min(setup.tasks) {
            batch.push(NewTask {
                traceparent: None,
                tenant_id: tenant.clone(),
                reminder_id: ReminderId::new(&format!("r{i}")).map_err(invalid)?,
                destination_id: DestinationId::new(&format!("d{}", i % setup.destinations))
                    .map_err(invalid)?,
                region: Region::EU,
                not_before: due,
                retry_horizon: Duration::hours(1),
                payload: Payload::json(format!(
                    r#"{{"i":{i},"due_ms":{},"pad":"{pad}"}}"#,
                    due.timestamp_millis()
                )),
                ordering_key: None,
            });
        }
        for answer in store.schedule_many(batch).await? {
            answer?;
        }
    }
    let mut conn = AsyncPgConnection::establish(url).await?;
    diesel::sql_query("ANALYZE tasks")
        .execute(&mut conn)
        .await?;
    Ok(())
}

fn invalid(e: remit::domain::InvalidInput) -> LoadError {
    LoadError::Setup(format!("a ceiling fixture is invalid: {e}"))
}
