//! A receiver that enforces a quota, as rate-limited APIs do: at most
//! `quota` requests per fixed window of `window`, counted from its start
//! for each path on its own (each destination has a path, so each has its
//! own quota), and a 429 with Retry-After (whole seconds to the window's
//! end) past that. It may answer slowly: each request is counted when it
//! arrives and answered after a delay that varies from one to the next, so
//! answers overtake one another. When it announces, every answer, 200s
//! included, carries the
//! draft IETF fields `RateLimit-Policy: "default";q=Q;w=W` and `RateLimit:
//! "default";r=R;t=T`, with integer seconds as the draft writes them.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, HttpRequest, HttpResponse};
use parking_lot::Mutex;

use super::receiver::serve;

#[derive(Default)]
struct Counts {
    /// Each path's current window and the requests it accepted in it.
    used: HashMap<String, (u64, u32)>,
    delivered: HashSet<String>,
    refused: u64,
    /// Requests that arrived, which spreads the delays.
    arrived: u64,
    /// The requests accepted in each window, over every path.
    per_window: Vec<u32>,
}

struct Quota {
    quota: u32,
    window: Duration,
    announce: bool,
    /// The longest an answer waits after its request is counted.
    slowest: Duration,
    started: Instant,
    counts: Mutex<Counts>,
}

pub struct QuotaReceiver {
    addr: SocketAddr,
    state: Arc<Quota>,
    stop: Option<actix_web::dev::ServerHandle>,
}

/// What the receiver saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Distinct tasks (by idempotency key) it accepted.
    pub delivered: usize,
    /// 429s it answered.
    pub refused: u64,
    /// Requests accepted in each window, over every path (with one path,
    /// none above the quota).
    pub per_window: Vec<u32>,
}

impl QuotaReceiver {
    pub fn start(quota: u32, window: Duration, announce: bool) -> Self {
        Self::start_slow(quota, window, announce, Duration::ZERO)
    }

    /// A receiver whose answers take up to `slowest` each, spread evenly
    /// over sixteen steps in an order that jumps about.
    pub fn start_slow(quota: u32, window: Duration, announce: bool, slowest: Duration) -> Self {
        let state = Arc::new(Quota {
            quota,
            window,
            announce,
            slowest,
            started: Instant::now(),
            counts: Mutex::default(),
        });
        let server_state = state.clone();
        let (addr, handle) = serve(move |app| {
            app.app_data(web::Data::from(server_state.clone()))
                .default_service(web::to(answer));
        });
        Self {
            addr,
            state,
            stop: Some(handle),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn seen(&self) -> Seen {
        let counts = self.state.counts.lock();
        Seen {
            delivered: counts.delivered.len(),
            refused: counts.refused,
            per_window: counts.per_window.clone(),
        }
    }

    /// Polls until `n` distinct tasks were accepted, or fails the test.
    pub async fn wait_for_delivered(&self, n: usize, within: Duration) -> Duration {
        let begun = Instant::now();
        loop {
            let seen = self.seen();
            if seen.delivered >= n {
                return begun.elapsed();
            }
            assert!(
                begun.elapsed() < within,
                "{} of {n} delivered after {within:?} ({} refused)",
                seen.delivered,
                seen.refused
            );
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for QuotaReceiver {
    fn drop(&mut self) {
        if let Some(handle) = self.stop.take() {
            drop(handle.stop(false));
        }
    }
}

async fn answer(request: HttpRequest, state: web::Data<Quota>) -> HttpResponse {
    let elapsed = state.started.elapsed();
    let window = (elapsed.as_nanos() / state.window.as_nanos()) as u64;
    let ends = state.window * (window as u32 + 1);
    let reset = (ends - elapsed).as_secs_f64().ceil() as u64;
    let key = request
        .headers()
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let (accepted, remaining, delay) = {
        let mut counts = state.counts.lock();
        counts.arrived += 1;
        let step = (counts.arrived * 7) % 16;
        let delay = state.slowest * step as u32 / 15;
        if counts.per_window.len() <= window as usize {
            counts.per_window.resize(window as usize + 1, 0);
        }
        let used = counts
            .used
            .entry(request.path().to_owned())
            .or_insert((window, 0));
        if used.0 != window {
            *used = (window, 0);
        }
        let accepted = used.1 < state.quota;
        if accepted {
            used.1 += 1;
        }
        let remaining = state.quota - used.1;
        if accepted {
            counts.per_window[window as usize] += 1;
            counts.delivered.insert(key);
        } else {
            counts.refused += 1;
        }
        (accepted, remaining, delay)
    };
    // What it counted on arrival is what it announces, however late.
    if !delay.is_zero() {
        actix_rt::time::sleep(delay).await;
    }
    let mut response = if accepted {
        HttpResponse::Ok()
    } else {
        let mut refused = HttpResponse::TooManyRequests();
        refused.insert_header(("retry-after", reset.to_string()));
        refused
    };
    if state.announce {
        response.insert_header((
            "ratelimit-policy",
            format!(
                r#""default";q={};w={}"#,
                state.quota,
                state.window.as_secs()
            ),
        ));
        response.insert_header(("ratelimit", format!(r#""default";r={remaining};t={reset}"#)));
    }
    response.finish()
}
