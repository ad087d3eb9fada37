//! Enqueueing as a product does: `POST /v1/tasks/batch` on a running
//! `remit run`, up to 1,000 tasks a call, several calls in flight at once.
//! Each payload carries its task's index and due time, so the receiver can
//! tell the lag of each delivery.

use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt, TryStreamExt};
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::clock::{due_at, now_ms};
use crate::error::LoadError;
use crate::process::API_TOKEN;
use crate::workloads::Lines;

/// Every run's tasks and destinations belong to region eu.
pub const REGION: &str = "eu";

/// A client of one process's API.
#[derive(Clone)]
pub struct Api {
    client: awc::Client,
    base: String,
}

/// What every task looks like.
#[derive(Debug, Clone)]
pub struct TaskShape {
    pub destinations: usize,
    /// Task `i` belongs to tenant `i` mod this; one tenant is `load`, as
    /// the ceiling's tasks are.
    tenants: usize,
    /// The arrivals that join an ordering line (key `stream-<n>`), if any.
    lines: Option<Lines>,
    /// Filler that brings each payload to about the configured size.
    pad: String,
}

/// What an enqueue did.
#[derive(Debug, Clone, Default)]
pub struct Enqueued {
    pub tasks: usize,
    /// The API's answers other than 201 created or 200 repeat.
    pub refused: usize,
    pub calls: usize,
    pub seconds: f64,
}

impl Enqueued {
    pub fn per_second(&self) -> f64 {
        self.tasks as f64 / self.seconds.max(1e-9)
    }
}

#[derive(Deserialize)]
struct BatchAnswer {
    results: Vec<TaskAnswer>,
}

#[derive(Deserialize)]
struct TaskAnswer {
    #[serde(default)]
    status: u16,
}

impl TaskShape {
    pub fn new(
        destinations: usize,
        tenants: usize,
        lines: Option<Lines>,
        payload_bytes: usize,
    ) -> Self {
        // The rest of the payload ({"i":…,"due_ms":…,"pad":""}) is about 45
        // bytes.
        let pad = "x".repeat(payload_bytes.saturating_sub(45));
        Self {
            destinations,
            tenants,
            lines,
            pad,
        }
    }

    /// Task `i` as the API takes it, due at `due_ms`.
    fn task_json(&self, i: usize, due_ms: i64) -> String {
        let not_before = due_at(due_ms).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let tenant = match self.tenants {
            1 => "load".to_owned(),
            n => format!("tenant-{}", i % n),
        };
        let (destination, key) = match self.lines {
            Some(lines) if i % lines.every == 0 => {
                let line = (i / lines.every) % lines.keys;
                let key = format!(r#","ordering_key":"stream-{line}""#);
                (line_destination(line, lines.keys, self.destinations), key)
            }
            _ => (i % self.destinations, String::new()),
        };
        format!(
            r#"{{"tenant_id":"{tenant}","reminder_id":"r{i}","destination_id":"d{destination}","region":"{REGION}","not_before":"{not_before}"{key},"payload":{{"i":{i},"due_ms":{due_ms},"pad":"{}"}}}}"#,
            self.pad
        )
    }

    /// A `POST /v1/tasks/batch` body for tasks `range`, all due at `due_ms`.
    pub fn batch_body(&self, range: Range<usize>, due_ms: i64) -> String {
        let tasks: Vec<String> = range.map(|i| self.task_json(i, due_ms)).collect();
        format!(r#"{{"tasks":[{}]}}"#, tasks.join(","))
    }
}

/// The destination of ordering line `line` of `lines`: spread evenly over
/// the destinations, so no two lines share one while there are enough.
pub fn line_destination(line: usize, lines: usize, destinations: usize) -> usize {
    line * destinations / lines.max(1) % destinations
}

impl Api {
    pub fn new(api: SocketAddr) -> Self {
        let client = awc::Client::builder()
            .bearer_auth(API_TOKEN)
            // A batch of 1,000 may wait on a busy database.
            .timeout(Duration::from_secs(120))
            .finish();
        Self {
            client,
            base: format!("http://{api}"),
        }
    }

    /// Registers destinations `d0…` of the region with these URLs,
    /// `connections` requests at a time.
    pub async fn add_destinations(
        &self,
        urls: &[String],
        connections: usize,
    ) -> Result<(), LoadError> {
        stream::iter(urls.iter().enumerate())
            .map(|(n, url)| async move {
                let body =
                    serde_json::json!({ "id": format!("d{n}"), "region": REGION, "url": url });
                let mut response = self
                    .client
                    .post(format!("{}/v1/destinations", self.base))
                    .send_json(&body)
                    .await
                    .map_err(|e| LoadError::Api(format!("POST /v1/destinations: {e}")))?;
                if response.status().is_success() {
                    Ok(())
                } else {
                    let text = response.body().await.unwrap_or_default();
                    Err(LoadError::Api(format!(
                        "POST /v1/destinations d{n} answered {}: {}",
                        response.status(),
                        String::from_utf8_lossy(&text)
                    )))
                }
            })
            .buffer_unordered(connections)
            .try_collect::<()>()
            .await
    }

    /// One batch call; returns how many of its tasks were refused.
    pub async fn post_batch(&self, body: String) -> Result<usize, LoadError> {
        let mut response = self
            .client
            .post(format!("{}/v1/tasks/batch", self.base))
            .content_type("application/json")
            .send_body(body)
            .await
            .map_err(|e| LoadError::Api(format!("POST /v1/tasks/batch: {e}")))?;
        let text = response
            .body()
            .limit(64 << 20)
            .await
            .map_err(|e| LoadError::Api(format!("reading a batch answer: {e}")))?;
        if !response.status().is_success() {
            return Err(LoadError::Api(format!(
                "POST /v1/tasks/batch answered {}: {}",
                response.status(),
                String::from_utf8_lossy(&text)
            )));
        }
        let answer: BatchAnswer = serde_json::from_slice(&text)
            .map_err(|e| LoadError::Api(format!("a batch answer that is not JSON: {e}")))?;
        Ok(answer
            .results
            .iter()
            .filter(|r| !matches!(r.status, 200 | 201))
            .count())
    }
}

/// Tasks `0..tasks`, all due at `due_ms`, in calls of `batch`,
/// `connections` calls in flight.
pub async fn all_at_once(
    api: &Api,
    shape: &TaskShape,
    tasks: usize,
    due_ms: i64,
    batch: usize,
    connections: usize,
) -> Result<Enqueued, LoadError> {
    let started = Instant::now();
    let chunks: Vec<Range<usize>> = (0..tasks)
        .step_by(batch)
        .map(|start| start..(start + batch).min(tasks))
        .collect();
    let calls = chunks.len();
    let refused: Vec<usize> = stream::iter(chunks)
        .map(|range| api.post_batch(shape.batch_body(range, due_ms)))
        .buffer_unordered(connections)
        .try_collect()
        .await?;
    Ok(Enqueued {
        tasks,
        refused: refused.into_iter().sum(),
        calls,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A fixed arrival rate and how it goes out.
#[derive(Debug, Clone)]
pub struct Pace {
    pub rate: f64,
    pub seconds: f64,
    pub lead_ms: i64,
    pub tick: Duration,
    pub batch: usize,
    pub connections: usize,
}

/// Arrivals at a fixed rate: every `tick` the tasks that have arrived since
/// the last one go out in calls of at most `batch`, each due `lead_ms` after
/// its call was built. At most `connections` calls are in flight; when the
/// API cannot keep up the ticker waits, and the achieved rate
/// (enqueue_per_s) falls below the asked one. `enqueued` counts tasks the
/// API accepted, as they are accepted.
pub async fn paced(
    api: Api,
    shape: TaskShape,
    pace: Pace,
    enqueued: Arc<AtomicU64>,
) -> Result<Enqueued, LoadError> {
    let total = (pace.rate * pace.seconds).round() as usize;
    let slots = Arc::new(Semaphore::new(pace.connections));
    let started = Instant::now();
    let mut sent = 0;
    let mut calls = Vec::new();
    let mut ticker = actix_rt::time::interval(pace.tick);
    while sent < total {
        ticker.tick().await;
        let arrived = ((started.elapsed().as_secs_f64() * pace.rate) as usize).min(total);
        while sent < arrived {
            let range = sent..(sent + pace.batch).min(arrived);
            sent = range.end;
            let slot = slots.clone().acquire_owned().await;
            let due_ms = now_ms() as i64 + pace.lead_ms;
            let body = shape.batch_body(range.clone(), due_ms);
            let (api, enqueued) = (api.clone(), enqueued.clone());
            calls.push(actix_rt::spawn(async move {
                let refused = api.post_batch(body).await;
                drop(slot);
                if let Ok(refused) = &refused {
                    enqueued.fetch_add((range.len() - refused) as u64, Ordering::Relaxed);
                }
                refused
            }));
        }
    }
    let mut result = Enqueued {
        tasks: total,
        calls: calls.len(),
        ..Enqueued::default()
    };
    for call in calls {
        result.refused += call
            .await
            .map_err(|e| LoadError::Api(format!("an enqueue call panicked: {e}")))??;
    }
    result.seconds = started.elapsed().as_secs_f64();
    Ok(result)
}
