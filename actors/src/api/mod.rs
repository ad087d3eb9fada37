//! The HTTP API, served by the same process as the runtime. Everything
//! under /v1 needs the bearer token; /healthz and /readyz do not.

mod auth;
mod destinations;
mod error;
mod tasks;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use actix_web::{web, HttpResponse};
use remit::store::{PgStore, Store};

pub use auth::authorize;
pub use destinations::CreateDestination;
pub use error::ApiError;
pub use tasks::{CreateTask, TaskRules};

/// What the handlers share; safe to use from every server worker thread.
#[derive(Debug, Clone)]
pub struct ApiState {
    pub store: PgStore,
    pub rules: TaskRules,
    pub token: Option<String>,
    /// Whether the region's supervisor is running.
    pub running: Arc<AtomicBool>,
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
        .service(
            web::scope("/v1")
                .route("/destinations", web::post().to(destinations::create))
                .route("/destinations/{id}", web::get().to(destinations::get))
                .route("/tasks", web::post().to(tasks::create))
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
    let body = serde_json::json!({ "database": database, "supervisor": supervisor });
    if database && supervisor {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}
