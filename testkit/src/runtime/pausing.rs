//! A rate-limited receiver: every `every`-th request to a path opens a
//! pause on that path and is answered `429 Retry-After: 2`; requests that
//! arrive inside an open pause are answered 429 too and recorded, so a test
//! can tell whether they started after the sender could have known.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, HttpRequest, HttpResponse};
use parking_lot::Mutex;

/// How long each pause lasts (the Retry-After it answers with).
pub const PAUSE: Duration = Duration::from_secs(2);

/// A request that arrived while its path was paused.
#[derive(Debug, Clone, Copy)]
pub struct InsidePause {
    /// How long after the pause opened it arrived.
    pub into_pause: Duration,
}

#[derive(Default)]
struct PathState {
    served: u32,
    paused_at: Option<Instant>,
}

#[derive(Default)]
struct Log {
    paths: HashMap<String, PathState>,
    inside: Vec<InsidePause>,
    pauses: u32,
    delivered: Vec<String>,
}

#[derive(Clone)]
struct State {
    every: u32,
    log: Arc<Mutex<Log>>,
}

pub struct PausingReceiver {
    addr: SocketAddr,
    state: State,
    stop: Option<actix_web::dev::ServerHandle>,
}

impl PausingReceiver {
    pub fn start(every: u32) -> Self {
        let state = State {
            every: every.max(1),
            log: Arc::default(),
        };
        let server_state = state.clone();
        let (addr, handle) = super::receiver::serve(move |app| {
            app.app_data(web::Data::new(server_state.clone()))
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

    /// Requests that arrived inside an open pause.
    pub fn inside_pauses(&self) -> Vec<InsidePause> {
        self.state.log.lock().inside.clone()
    }

    pub fn pauses_opened(&self) -> u32 {
        self.state.log.lock().pauses
    }

    /// Idempotency keys of the requests answered 200.
    pub fn delivered(&self) -> Vec<String> {
        self.state.log.lock().delivered.clone()
    }
}

impl Drop for PausingReceiver {
    fn drop(&mut self) {
        if let Some(handle) = self.stop.take() {
            drop(handle.stop(false));
        }
    }
}

async fn answer(request: HttpRequest, state: web::Data<State>) -> HttpResponse {
    let now = Instant::now();
    let mut log = state.log.lock();
    let log = &mut *log;
    let path = log.paths.entry(request.path().to_owned()).or_default();
    if let Some(at) = path.paused_at.filter(|at| now < *at + PAUSE) {
        log.inside.push(InsidePause {
            into_pause: now - at,
        });
        return too_many();
    }
    path.paused_at = None;
    path.served += 1;
    if path.served % state.every == 0 {
        path.paused_at = Some(now);
        log.pauses += 1;
        return too_many();
    }
    if let Some(key) = request
        .headers()
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
    {
        log.delivered.push(key.to_owned());
    }
    HttpResponse::Ok().finish()
}

fn too_many() -> HttpResponse {
    HttpResponse::TooManyRequests()
        .insert_header(("retry-after", PAUSE.as_secs().to_string()))
        .finish()
}
