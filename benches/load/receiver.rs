//! The receiver every run delivers to: an actix-web server on 127.0.0.1:0
//! that answers 200 (or, with a per-destination limit, 429 with
//! Retry-After past it), counts requests and repeated idempotency keys,
//! and measures each delivery's lag from the due time in its payload.
//!
//! Destinations are paths (`/d/<n>`), so the limit is kept per path.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use parking_lot::Mutex;
use serde::Deserialize;

use crate::clock::now_ms;
use crate::error::LoadError;

/// How the receiver treats each destination's requests.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// Every request gets a 200.
    Open,
    /// A token bucket per destination: past it, 429 with Retry-After (whole
    /// seconds until a token is back, at least 1).
    PerDestination { rate: f64, burst: f64 },
}

/// What the receiver has counted so far.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub requests: u64,
    /// Distinct idempotency keys answered 2xx: tasks delivered.
    pub delivered: u64,
    /// 2xx answers beyond the first for a key: deliveries the receiver had
    /// to deduplicate.
    pub duplicates: u64,
    /// Requests beyond the first for a key, whatever the answer (retries
    /// after a 429 included).
    pub repeat_requests: u64,
    pub rejected: u64,
    /// Requests that arrived while their destination's last Retry-After
    /// had not run out (in flight when the 429 came, or not held back).
    pub early_after_429: u64,
    /// Requests without an Idempotency-Key header.
    pub unkeyed: u64,
    /// Each delivery's lag in milliseconds, sorted.
    pub lags_ms: Vec<f64>,
    /// When the last delivery arrived (ms since the epoch).
    pub last_delivery_ms: Option<f64>,
    /// When each delivery arrived (ms since the epoch), in arrival order.
    pub delivered_at_ms: Vec<f64>,
}

#[derive(Debug, Default)]
struct Seen {
    requests: u32,
    ok: u32,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at_ms: f64,
    retry_until_ms: f64,
}

#[derive(Debug, Default)]
struct Book {
    keys: HashMap<String, Seen>,
    buckets: HashMap<String, Bucket>,
    requests: u64,
    rejected: u64,
    early_after_429: u64,
    unkeyed: u64,
    lags_ms: Vec<f64>,
    /// Lags since the last [`Receiver::take_window`].
    window_lags_ms: Vec<f64>,
    last_delivery_ms: Option<f64>,
    delivered_at_ms: Vec<f64>,
}

#[derive(Debug)]
struct Shared {
    limit: Limit,
    book: Mutex<Book>,
    /// Also in the book; kept apart so progress reads take no lock.
    delivered: AtomicU64,
    /// Lags count from no earlier than this (ms since the epoch, as bits):
    /// a drain measures from when the runtime started, not from when the
    /// backlog was enqueued.
    origin_ms: AtomicU64,
}

/// The part of a payload the receiver reads.
#[derive(Deserialize)]
struct Probe {
    due_ms: f64,
}

enum Verdict {
    Ok,
    Limited { retry_after_s: u64 },
}

#[derive(Debug)]
pub struct Receiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: actix_web::dev::ServerHandle,
}

impl Receiver {
    /// Starts on a thread and actix system of its own, with `workers`
    /// worker threads.
    pub fn start(limit: Limit, workers: usize) -> Result<Self, LoadError> {
        let shared = Arc::new(Shared {
            limit,
            book: Mutex::default(),
            delivered: AtomicU64::new(0),
            origin_ms: AtomicU64::new(0f64.to_bits()),
        });
        let data = web::Data::from(shared.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let server = HttpServer::new(move || {
                    App::new()
                        .app_data(data.clone())
                        .default_service(web::to(answer))
                })
                .workers(workers)
                .disable_signals()
                .bind("127.0.0.1:0");
                let server = match server {
                    Ok(server) => server,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let addr = server.addrs()[0];
                let server = server.run();
                let _ = tx.send(Ok((addr, server.handle())));
                let _ = server.await;
            });
        });
        let started = rx
            .recv()
            .map_err(|_| LoadError::Setup("the receiver's thread ended".into()))?;
        let (addr, server) = started.map_err(LoadError::io("binding the receiver"))?;
        Ok(Self {
            addr,
            shared,
            server,
        })
    }

    /// The URL of destination `n`.
    pub fn url(&self, n: usize) -> String {
        format!("http://{}/d/{n}", self.addr)
    }

    /// Lags are measured from `max(due, origin)` from now on.
    pub fn set_origin(&self, origin_ms: f64) {
        self.shared
            .origin_ms
            .store(origin_ms.to_bits(), Ordering::Relaxed);
    }

    /// Tasks delivered so far (distinct keys answered 2xx).
    pub fn delivered(&self) -> u64 {
        self.shared.delivered.load(Ordering::Relaxed)
    }

    /// The lags of the deliveries since the last call.
    pub fn take_window(&self) -> Vec<f64> {
        std::mem::take(&mut self.shared.book.lock().window_lags_ms)
    }

    pub fn tally(&self) -> Tally {
        let book = self.shared.book.lock();
        let mut tally = Tally {
            requests: book.requests,
            rejected: book.rejected,
            early_after_429: book.early_after_429,
            unkeyed: book.unkeyed,
            lags_ms: book.lags_ms.clone(),
            last_delivery_ms: book.last_delivery_ms,
            delivered_at_ms: book.delivered_at_ms.clone(),
            ..Tally::default()
        };
        for seen in book.keys.values() {
            tally.delivered += u64::from(seen.ok > 0);
            tally.duplicates += u64::from(seen.ok.saturating_sub(1));
            tally.repeat_requests += u64::from(seen.requests.saturating_sub(1));
        }
        drop(book);
        tally.lags_ms.sort_by(f64::total_cmp);
        tally
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // The stop command goes out when called; nothing waits for it.
        drop(self.server.stop(false));
    }
}

impl Shared {
    fn judge(&self, key: Option<&str>, path: &str, due_ms: Option<f64>, now: f64) -> Verdict {
        let mut guard = self.book.lock();
        // One borrow of the book, so its fields can be borrowed apart.
        let book = &mut *guard;
        book.requests += 1;
        let verdict = match self.limit {
            Limit::Open => Verdict::Ok,
            Limit::PerDestination { rate, burst } => {
                let bucket = book.buckets.entry(path.to_owned()).or_insert(Bucket {
                    tokens: burst,
                    at_ms: now,
                    retry_until_ms: 0.0,
                });
                let early = now < bucket.retry_until_ms;
                bucket.tokens = (bucket.tokens + (now - bucket.at_ms) / 1000.0 * rate).min(burst);
                bucket.at_ms = now;
                let verdict = if bucket.tokens >= 1.0 {
                    bucket.tokens -= 1.0;
                    Verdict::Ok
                } else {
                    let wait_s = ((1.0 - bucket.tokens) / rate).ceil().max(1.0);
                    bucket.retry_until_ms = now + wait_s * 1000.0;
                    Verdict::Limited {
                        retry_after_s: wait_s as u64,
                    }
                };
                book.early_after_429 += u64::from(early);
                if matches!(verdict, Verdict::Limited { .. }) {
                    book.rejected += 1;
                }
                verdict
            }
        };
        let Some(key) = key else {
            book.unkeyed += 1;
            return verdict;
        };
        let seen = book.keys.entry(key.to_owned()).or_default();
        seen.requests += 1;
        if matches!(verdict, Verdict::Ok) {
            seen.ok += 1;
            if seen.ok == 1 {
                let origin = f64::from_bits(self.origin_ms.load(Ordering::Relaxed));
                let lag = now - due_ms.unwrap_or(now).max(origin);
                book.lags_ms.push(lag);
                book.window_lags_ms.push(lag);
                book.last_delivery_ms = Some(now);
                book.delivered_at_ms.push(now);
                self.delivered.fetch_add(1, Ordering::Relaxed);
            }
        }
        verdict
    }
}

async fn answer(request: HttpRequest, body: web::Bytes, shared: web::Data<Shared>) -> HttpResponse {
    let now = now_ms();
    let key = request
        .headers()
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok());
    let due_ms = serde_json::from_slice::<Probe>(&body)
        .ok()
        .map(|p| p.due_ms);
    match shared.judge(key, request.path(), due_ms, now) {
        Verdict::Ok => HttpResponse::Ok().finish(),
        Verdict::Limited { retry_after_s } => HttpResponse::TooManyRequests()
            .insert_header(("retry-after", retry_after_s.to_string()))
            .finish(),
    }
}
