//! The HTTP API, served by the same process as the runtime. Everything
//! under /v1 needs the bearer token, checked before the body is read;
//! /healthz, /readyz and /metrics do not.
//!
//! # Layout
//! - `auth`: the bearer token, as middleware in front of /v1.
//! - `failures`: 5xx answers logged with their cause.
//! - `error`: the JSON error shape and the status of each error.
//! - `payload`: a task's payload kept byte for byte.
//! - `destinations`, `tasks`: the handlers, which see only their own
//!   region's destinations and tasks.

mod auth;
mod batch;
mod destinations;
mod error;
mod failures;
mod payload;
mod tasks;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use actix_web::middleware::from_fn;
use actix_web::{web, HttpResponse};
use remit::store::{Database, Store};

use crate::egress::Egress;
use crate::runtime::{Capacity, Health, RuntimeStats};

pub use auth::authorize;
pub use destinations::CreateDestination;
pub use error::ApiError;
pub use tasks::{CreateTask, TaskRules};

/// What the handlers share; safe to use from every server worker thread.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// A pool of the API's own, so requests cannot take the connections
    /// delivery needs.
    pub store: Database,
    pub rules: TaskRules,
    pub token: Option<String>,
    /// Where webhooks may be sent; new destinations are checked against it.
    pub egress: Arc<Egress>,
    /// Whether the region's supervisor is running.
    pub running: Arc<AtomicBool>,
    /// Whether the region's runtime is making progress.
    pub progress: Progress,
    /// The runtime's counters, served by /metrics.
    pub stats: Arc<RuntimeStats>,
    /// Where 5xx answers are logged with their cause.
    pub log: slog::Logger,
}

/// What tells /readyz that the runtime can make progress: no actor is
/// restart-looping, and no claimed task has sat in memory past a lease.
#[derive(Debug, Clone)]
pub struct Progress {
    pub health: Health,
    pub capacity: Capacity,
    pub lease: std::time::Duration,
}

impl Progress {
    /// Why the runtime cannot make progress, if it cannot.
    pub fn stuck(&self) -> Option<String> {
        if let Some(actor) = self.health.looping() {
            return Some(format!("{actor} is restart-looping"));
        }
        match self.capacity.oldest_held_for() {
            Some(held) if held > self.lease => Some(format!(
                "a claimed task has been held for {} ms, past its lease",
                held.as_millis()
            )),
            _ => None,
        }
    }
}

/// Registers the routes on an actix-web app.
pub fn configure(config: &mut web::ServiceConfig) {
    config
        .app_data(
            web::JsonConfig::default()
                .limit(remit::domain::MAX_PAYLOAD_BYTES + 64 * 1024)
                .error_handler(|e, _| ApiError::from_json(&e).into()),
        )
        .app_data(web::PathConfig::default())
        .route("/healthz", web::get().to(healthz))
        .route("/readyz", web::get().to(readyz))
        .route("/metrics", web::get().to(metrics))
        .service(
            web::scope("/v1")
                // The last wrap runs first: failures are logged whatever
                // answers, and the token is checked before any handler's
                // extractor reads the body.
                .wrap(from_fn(auth::require_token))
                .wrap(from_fn(failures::log_server_errors))
                .route("/destinations", web::post().to(destinations::create))
                .route("/destinations/{id}", web::get().to(destinations::get))
                .route("/tasks", web::post().to(tasks::create))
                .service(
                    web::resource("/tasks/batch")
                        .app_data(
                            web::JsonConfig::default()
                                .limit(batch::MAX_BATCH_BODY)
                                .error_handler(|e, _| ApiError::from_json(&e).into()),
                        )
                        .route(web::post().to(batch::create)),
                )
                .route("/tasks/{id}", web::get().to(tasks::get))
                .route("/tasks/{id}/replay", web::post().to(tasks::replay)),
        );
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().body("ok")
}

async fn readyz(state: web::Data<ApiState>) -> HttpResponse {
    let database = state.store.ping().await.is_ok();
    let supervisor = state.running.load(Ordering::SeqCst);
    let stuck = state.progress.stuck();
    let body = serde_json::json!({
        "database": database,
        "supervisor": supervisor,
        "progress": stuck.is_none(),
        "stuck": stuck,
    });
    if database && supervisor && stuck.is_none() {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}

/// The runtime's series in the Prometheus text format (see
/// `runtime::Metrics`). Counts and durations only: no task ids, no tenant
/// or reminder ids, no payloads.
async fn metrics(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(state.stats.metrics.encode())
}
