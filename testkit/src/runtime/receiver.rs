//! One scriptable webhook receiver for every end-to-end test: it listens on
//! 127.0.0.1:0, answers each path from a script (status, Retry-After,
//! delay), and records every request it gets.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use tokio::sync::Notify;

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub retry_after: Option<RetryAfter>,
    pub delay: Duration,
}

#[derive(Debug, Clone)]
pub enum RetryAfter {
    Seconds(u64),
    /// An HTTP-date this far after the request arrived.
    DateIn(Duration),
}

impl Reply {
    pub fn status(status: u16) -> Self {
        Self {
            status,
            retry_after: None,
            delay: Duration::ZERO,
        }
    }

    pub fn ok() -> Self {
        Self::status(200)
    }

    pub fn retry_after(mut self, value: RetryAfter) -> Self {
        self.retry_after = Some(value);
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// One request as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// When the request arrived.
    pub at: DateTime<Utc>,
    /// When the receiver answered it (after any scripted delay).
    pub answered_at: DateTime<Utc>,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    pub status: u16,
    /// The Retry-After header it answered with, if any.
    pub retry_after: Option<String>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

#[derive(Default)]
struct Script {
    per_path: HashMap<String, VecDeque<Reply>>,
    default: HashMap<String, Reply>,
}

#[derive(Clone)]
struct State {
    script: Arc<Mutex<Script>>,
    log: Arc<Mutex<Vec<Received>>>,
    arrived: Arc<Notify>,
}

pub struct Receiver {
    addr: SocketAddr,
    state: State,
    stop: Option<actix_web::dev::ServerHandle>,
}

impl Receiver {
    /// Starts on a thread of its own, so it answers even while a test blocks.
    pub fn start() -> Self {
        let state = State {
            script: Arc::default(),
            log: Arc::default(),
            arrived: Arc::new(Notify::new()),
        };
        let server_state = state.clone();
        let (addr, handle) = serve(move |app| {
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

    /// Answers `path` with these replies in order, then with `then`.
    pub fn script(&self, path: &str, replies: Vec<Reply>, then: Reply) {
        let mut script = self.state.script.lock();
        script.per_path.insert(path.into(), replies.into());
        script.default.insert(path.into(), then);
    }

    pub fn requests(&self) -> Vec<Received> {
        self.state.log.lock().clone()
    }

    pub fn requests_to(&self, path: &str) -> Vec<Received> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Waits until `done` holds for the request log, or fails the test.
    pub async fn wait_until(
        &self,
        within: Duration,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) {
        let deadline = Instant::now() + within;
        loop {
            let notified = self.state.arrived.notified();
            if done(&self.state.log.lock()) {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, notified).await.is_err() {
                if done(&self.state.log.lock()) {
                    return;
                }
                panic!(
                    "timed out after {within:?} waiting for {what}; {} requests seen",
                    self.state.log.lock().len()
                );
            }
        }
    }
}

/// Serves the routes `configure` sets up on 127.0.0.1:0, on a thread and
/// actix system of its own, so it answers even while a test blocks.
pub fn serve<F>(configure: F) -> (SocketAddr, actix_web::dev::ServerHandle)
where
    F: Fn(&mut web::ServiceConfig) + Clone + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_rt::System::new().block_on(async move {
            let server = HttpServer::new(move || App::new().configure(configure.clone()))
                .workers(2)
                .disable_signals()
                .bind("127.0.0.1:0")
                .expect("bind the receiver");
            let addr = server.addrs()[0];
            let server = server.run();
            tx.send((addr, server.handle()))
                .expect("report the address");
            let _ = server.await;
        });
    });
    rx.recv().expect("receiver started")
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(handle) = self.stop.take() {
            drop(handle.stop(false));
        }
    }
}

async fn answer(request: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    let at = Utc::now();
    let path = request.path().to_owned();
    let reply = {
        let mut script = state.script.lock();
        let queued = script.per_path.get_mut(&path).and_then(VecDeque::pop_front);
        queued
            .or_else(|| script.default.get(&path).cloned())
            .unwrap_or_else(Reply::ok)
    };
    if !reply.delay.is_zero() {
        actix_rt::time::sleep(reply.delay).await;
    }
    let retry_after = reply.retry_after.as_ref().map(|r| match r {
        RetryAfter::Seconds(s) => s.to_string(),
        RetryAfter::DateIn(d) => {
            let when = std::time::SystemTime::from(at) + *d;
            httpdate::fmt_http_date(when)
        }
    });
    let headers = request
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    state.log.lock().push(Received {
        path,
        at,
        answered_at: Utc::now(),
        headers,
        body: body.to_vec(),
        status: reply.status,
        retry_after: retry_after.clone(),
    });
    state.arrived.notify_waiters();
    let mut response = HttpResponse::build(
        actix_web::http::StatusCode::from_u16(reply.status).expect("a valid status"),
    );
    if let Some(value) = retry_after {
        response.insert_header(("retry-after", value));
    }
    response.finish()
}
