//! Throughput of the embedded store (a SQLite file): scheduling in batches,
//! then the delivery path's database work (claim a batch, finish it with
//! one `finish_many`), with several stores on one file as several
//! processes would be. No HTTP: this is the store's ceiling.
//!
//!     cargo bench --bench embedded [CONSUMERSxBATCH ...]
//!
//! Each setting gets a fresh file in a temporary directory. Results and the
//! method are in docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use remit::store::{
    ClaimRequest, Database, DatabaseConfig, Destinations, Finish, Leases, Sandbox, Schedule,
};
use std::time::Instant;

use chrono::{Duration, Utc};
use remit::domain::{
    AttemptRecord, DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TenantId,
};
use remit::payload_crypto::PayloadKey;
use remit::policy::{Decision, Transition};

const TASKS: usize = 20_000;
const DESTINATIONS: usize = 20;

fn key() -> PayloadKey {
    PayloadKey::from_bytes([1; 32])
}

async fn run(consumers: u32, batch: u32) {
    let name = format!("remit_bench_{}", uuid::Uuid::new_v4().simple());
    let sandbox = Sandbox::create(None, &name).await.unwrap();
    let store = Database::connect(&DatabaseConfig::new(sandbox.url.clone()), key())
        .await
        .unwrap();
    let mut destinations = Vec::new();
    for d in 0..DESTINATIONS {
        let id = DestinationId::new(&format!("d{d}")).unwrap();
        let new = NewDestination::new(id.clone(), Region::US, "http://127.0.0.1:9/", None);
        store.add_destination(new.unwrap()).await.unwrap();
        destinations.push(id);
    }
    let scheduling = Instant::now();
    let due = Utc::now() - Duration::minutes(1);
    for chunk in (0..TASKS).collect::<Vec<_>>().chunks(1_000) {
        let batch: Vec<NewTask> = chunk
            .iter()
            .map(|i| NewTask {
                traceparent: None,
                tenant_id: TenantId::new("clinic-1").unwrap(),
                reminder_id: ReminderId::new(&format!("r{i}")).unwrap(),
                destination_id: destinations[i % DESTINATIONS].clone(),
                region: Region::US,
                not_before: due,
                retry_horizon: Duration::days(1),
                payload: Payload::json(format!(r#"{{"renewal":{i},"pad":"{}"}}"#, "x".repeat(200))),
                ordering_key: None,
            })
            .collect();
        for answer in store.schedule_many(batch).await.unwrap() {
            answer.unwrap();
        }
    }
    let enqueue = TASKS as f64 / scheduling.elapsed().as_secs_f64();

    let started = Instant::now();
    let workers: Vec<_> = (0..consumers)
        .map(|i| {
            let url = sandbox.url.clone();
            tokio::spawn(async move {
                // A store of its own per consumer: a connection of its own,
                // as a separate process on the same file.
                let store = Database::connect(&DatabaseConfig::new(url), key())
                    .await
                    .unwrap();
                let request = ClaimRequest {
                    region: Region::US,
                    lease_owner: format!("bench-{i}"),
                    lease: Duration::seconds(60),
                    limit: batch,
                    per_destination_cap: batch,
                    caps: Vec::new(),
                    skip: Vec::new(),
                    resume_after: None,
                };
                let mut done = 0usize;
                loop {
                    let claimed = store.claim_due(&request).await.unwrap();
                    if claimed.is_empty() {
                        return done;
                    }
                    let finishes: Vec<Finish> = claimed
                        .iter()
                        .map(|c| Finish {
                            lease: c.lease(),
                            destination: c.task.destination_id.clone(),
                            decision: Decision {
                                transition: Transition::Deliver,
                                pause_destination_until: None,
                                record: AttemptRecord {
                                    http_status: Some(200),
                                    ..AttemptRecord::default()
                                },
                            },
                        })
                        .collect();
                    done += store.finish_many(&finishes).await.unwrap().outcomes.len();
                }
            })
        })
        .collect();
    let mut delivered = 0;
    for w in workers {
        delivered += w.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "consumers={consumers:>2} batch={batch:>3}: enqueue {enqueue:.0}/s; {delivered} deliveries in {secs:.2} s = {:.0}/s",
        delivered as f64 / secs
    );
    assert_eq!(delivered, TASKS, "every task delivered exactly once");
    drop(store);
    sandbox.remove().await.unwrap();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let settings = std::env::args()
            .skip(1)
            .filter_map(|a| {
                let (c, b) = a.split_once('x')?;
                Some((c.parse().ok()?, b.parse().ok()?))
            })
            .collect::<Vec<(u32, u32)>>();
        let default = [(1, 16), (1, 64), (1, 256), (2, 64), (4, 64)];
        let settings = if settings.is_empty() {
            default.to_vec()
        } else {
            settings
        };
        for (consumers, batch) in settings {
            run(consumers, batch).await;
        }
    });
}
