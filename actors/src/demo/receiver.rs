//! The demo's receiver: a local HTTP server that behaves like the receivers
//! remit meets, and checks remit's promises from the receiving end.
//!
//! - Some destinations accept only so many requests each second (a fixed
//!   window, as many APIs count). Past that, the answer is `429` with
//!   `Retry-After`, in seconds or as an HTTP-date by turns, and the
//!   deadline it names is remembered for that key.
//! - One destination answers `503` now and then; one answers slowly.
//! - A request before its reminder's deadline (`due_ms` in the payload), or
//!   a retry before the Retry-After deadline its key was given, breaks a
//!   promise and is counted as such.
//! - A second `2xx` for a key it already accepted is a duplicate it
//!   suppresses by that key, as a receiver should.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use chrono::{DateTime, Utc};
use parking_lot::Mutex;

/// One destination's behaviour.
#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    /// Requests it accepts in each second, if it limits them.
    pub per_second: Option<u32>,
    /// Every `n`th request gets a 503 without Retry-After.
    pub unavailable_every: Option<u64>,
    /// How long it takes to answer.
    pub delay: Duration,
}

/// What the receiver saw.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub requests: u64,
    pub accepted: u64,
    pub duplicates: u64,
    pub rate_limited_seconds: u64,
    pub rate_limited_date: u64,
    pub unavailable: u64,
    /// Retries that came after a 429 for their key: how many, and the
    /// smallest margin by which one followed its deadline.
    pub honoured: u64,
    pub smallest_margin: Option<chrono::Duration>,
    /// Requests that broke a promise: before the reminder's deadline, or
    /// (by key) before a Retry-After deadline.
    pub before_deadline: u64,
    pub before_retry_after: Vec<String>,
}

/// A destination's current one-second window and what it accepted in it.
struct Window {
    started: Instant,
    count: u32,
}

#[derive(Default)]
struct State {
    seen: Seen,
    windows: HashMap<String, Window>,
    counts: HashMap<String, u64>,
    accepted: std::collections::HashSet<String>,
    /// The Retry-After deadline each key was last given.
    deadlines: HashMap<String, DateTime<Utc>>,
}

pub struct Receiver {
    state: web::Data<(Mutex<State>, HashMap<String, Behaviour>)>,
    handle: actix_web::dev::ServerHandle,
    pub addr: std::net::SocketAddr,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("addr", &self.addr)
            .finish()
    }
}

impl Receiver {
    /// Starts on 127.0.0.1:0, serving `/d/<name>` for each destination.
    pub fn start(behaviours: HashMap<String, Behaviour>) -> std::io::Result<Self> {
        let state = web::Data::new((Mutex::new(State::default()), behaviours));
        let shared = state.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(shared.clone())
                .route("/d/{name}", web::post().to(receive))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")?;
        let addr = server.addrs()[0];
        let server = server.run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Ok(Self {
            state,
            handle,
            addr,
        })
    }

    pub fn seen(&self) -> Seen {
        self.state.0.lock().seen.clone()
    }

    pub async fn stop(self) {
        self.handle.stop(true).await;
    }
}

type Shared = web::Data<(Mutex<State>, HashMap<String, Behaviour>)>;

async fn receive(
    request: HttpRequest,
    name: web::Path<String>,
    body: web::Bytes,
    shared: Shared,
) -> HttpResponse {
    let now = Utc::now();
    let key = request
        .headers()
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let due = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("due_ms").and_then(serde_json::Value::as_i64))
        .and_then(DateTime::from_timestamp_millis);
    let Some(behaviour) = shared.1.get(name.as_str()).copied() else {
        return HttpResponse::NotFound().finish();
    };
    let answer = {
        let mut state = shared.0.lock();
        let state = &mut *state;
        state.seen.requests += 1;
        if due.is_some_and(|due| now < due) {
            state.seen.before_deadline += 1;
        }
        if let Some(deadline) = state.deadlines.remove(&key) {
            let margin = now - deadline;
            if margin < chrono::Duration::zero() {
                state.seen.before_retry_after.push(key.clone());
            } else {
                state.seen.honoured += 1;
            }
            state.seen.smallest_margin =
                Some(state.seen.smallest_margin.map_or(margin, |m| m.min(margin)));
        }
        let count = state.counts.entry(name.to_string()).or_default();
        *count += 1;
        let window = state.windows.entry(name.to_string()).or_insert(Window {
            started: Instant::now(),
            count: 0,
        });
        if window.started.elapsed() >= Duration::from_secs(1) {
            *window = Window {
                started: Instant::now(),
                count: 0,
            };
        }
        if behaviour
            .per_second
            .is_some_and(|limit| window.count >= limit)
        {
            // Over the limit: by turns a delay in seconds and an HTTP-date.
            let by_date = (state.seen.rate_limited_seconds + state.seen.rate_limited_date) % 2 == 1;
            let (header, deadline) = if by_date {
                state.seen.rate_limited_date += 1;
                let at = SystemTime::now() + Duration::from_secs(2);
                // An HTTP-date has whole seconds; the deadline is the date.
                let text = httpdate::fmt_http_date(at);
                let deadline = httpdate::parse_http_date(&text)
                    .map(DateTime::<Utc>::from)
                    .unwrap_or(now);
                (text, deadline)
            } else {
                state.seen.rate_limited_seconds += 1;
                ("1".to_owned(), now + chrono::Duration::seconds(1))
            };
            state.deadlines.insert(key, deadline);
            Answer::RateLimited(header)
        } else if behaviour
            .unavailable_every
            .is_some_and(|n| n > 0 && *count % n == 0)
        {
            window.count += 1;
            state.seen.unavailable += 1;
            Answer::Unavailable
        } else {
            window.count += 1;
            if state.accepted.insert(key) {
                state.seen.accepted += 1;
            } else {
                state.seen.duplicates += 1;
            }
            Answer::Ok
        }
    };
    if !behaviour.delay.is_zero() {
        actix_rt::time::sleep(behaviour.delay).await;
    }
    match answer {
        Answer::Ok => HttpResponse::Ok().finish(),
        Answer::Unavailable => HttpResponse::ServiceUnavailable().finish(),
        Answer::RateLimited(retry_after) => HttpResponse::TooManyRequests()
            .insert_header(("retry-after", retry_after))
            .finish(),
    }
}

enum Answer {
    Ok,
    Unavailable,
    RateLimited(String),
}
