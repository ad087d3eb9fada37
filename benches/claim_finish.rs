//! Throughput of the delivery path's database work: claim a batch, then
//! finish each task as delivered (`finish`, one at a time), with several consumers at once.
//! Real PostgreSQL (DATABASE_URL, else 127.0.0.1:5432), a fresh schema.
//!
//!     cargo bench --bench claim_finish [CONSUMERSxBATCH ...]
//!
//! Prints one line per (consumers, batch) setting; docs/benchmarks.md keeps
//! the results and the method.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use remit::store::{ClaimRequest, Destinations, Leases, PgConfig, PgStore};
use std::time::Instant;

use chrono::Duration;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use remit::domain::{AttemptRecord, DestinationId, NewDestination, Region};
use remit::payload_crypto::PayloadKey;
use remit::policy::{Decision, Transition};

const TASKS: usize = 20_000;

async fn fresh_store(url: &str, consumers: u32) -> (PgStore, String, String) {
    let schema = format!("remit_bench_{}", uuid::Uuid::new_v4().simple());
    let mut admin = AsyncPgConnection::establish(url).await.unwrap();
    diesel::sql_query(format!("CREATE SCHEMA {schema}"))
        .execute(&mut admin)
        .await
        .unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    let scoped = format!("{url}{sep}options=-c%20search_path%3D{schema}");
    remit::store::migrate(&scoped).await.unwrap();
    let mut config = PgConfig::new(scoped.clone());
    config.pool_size = consumers + 1;
    let store = PgStore::connect(&config, PayloadKey::from_bytes([1; 32]))
        .await
        .unwrap();
    (store, scoped, schema)
}

/// 20 destinations with their tasks due now, inserted in bulk.
async fn load(store: &PgStore, scoped: &str) {
    for d in 0..20 {
        let id = DestinationId::new(&format!("d{d}")).unwrap();
        let new = NewDestination::new(id, Region::US, "http://127.0.0.1:9/", None).unwrap();
        store.add_destination(new).await.unwrap();
    }
    let mut conn = AsyncPgConnection::establish(scoped).await.unwrap();
    diesel::sql_query(format!(
        "WITH p AS (
             INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext)
             SELECT gen_random_uuid(), 'application/json', '\\x00', '\\x00', '\\x00'
             FROM generate_series(1, {TASKS}) RETURNING payload_ref)
         INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, not_before,
                            available_at, retry_horizon_at, idempotency_key, payload_ref)
         SELECT gen_random_uuid(), 't', payload_ref::text, 'd' || (abs(hashtext(payload_ref::text)) % 20),
                'us', now() - interval '1 minute', now() - interval '1 minute', now() + interval '1 day',
                'msg_' || payload_ref, payload_ref
         FROM p"
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    diesel::sql_query("ANALYZE")
        .execute(&mut conn)
        .await
        .unwrap();
}

async fn run(url: &str, consumers: u32, batch: u32) {
    let (store, scoped, schema) = fresh_store(url, consumers).await;
    load(&store, &scoped).await;
    let started = Instant::now();
    let workers: Vec<_> = (0..consumers)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
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
                    for c in claimed {
                        store
                            .finish(
                                &c.lease(),
                                &c.task.destination_id,
                                &Decision {
                                    transition: Transition::Deliver,
                                    pause_destination_until: None,
                                    record: AttemptRecord::default(),
                                },
                            )
                            .await
                            .unwrap();
                        done += 1;
                    }
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
        "consumers={consumers:>2} batch={batch:>2}: {delivered} deliveries in {secs:.2} s = {:.0}/s",
        delivered as f64 / secs
    );
    assert_eq!(delivered, TASKS, "every task delivered exactly once");
    let mut admin = AsyncPgConnection::establish(url).await.unwrap();
    diesel::sql_query(format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&mut admin)
        .await
        .unwrap();
}

fn main() {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
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
        let default = [(1, 1), (4, 1), (1, 16), (4, 16), (8, 16), (16, 16), (8, 64)];
        let settings = if settings.is_empty() {
            default.to_vec()
        } else {
            settings
        };
        for (consumers, batch) in settings {
            run(&url, consumers, batch).await;
        }
    });
}
