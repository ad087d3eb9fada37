//! The HTTP API, served by the same process as the runtime. Everything
//! under /v1 needs a bearer token whose scope the route admits, checked
//! before the body is read; /healthz, /readyz, /metrics and /openapi.json
//! do not.
//!
//! # Layout
//! - `auth`: the bearer token, as middleware in front of /v1: the
//!   bootstrap token or a stored API token, and the route's scope.
//! - `scopes`: which scopes each /v1 route admits, said once.
//! - `caller`: who is calling, for handlers that limit by tenant.
//! - `tokens`: /v1/tokens, making, listing and revoking API tokens.
//! - `audit`: /v1/audit, the audit log of admin actions, a page at a time.
//! - `failures`: 5xx answers logged with their cause.
//! - `error`: the JSON error shape and the status of each error.
//! - `body`: request bodies, JSON objects only, with errors naming the field.
//! - `payload`: a task's payload kept byte for byte.
//! - `secrets`: a destination's signing secrets (rotate, list).
//! - `destinations`, `destination_settings` (change a destination's URL
//!   and settings, delete it), `destination_switch` (enable, disable, retry now),
//!   `destination_stats` (a destination's stats by the hour),
//!   `tasks`, `batch`, `replays` (bulk replay and cancel), `task_changes`
//!   (cancel, reschedule, erase), `reminder_changes` (the same by tenant
//!   and reminder, and a tenant's erasure), `reminder_put` (a reminder made due at a
//!   time, created or moved), `listings` (pages of tasks and destinations): the
//!   handlers, which see only their own region's destinations and tasks.
//! - `task_views`: a task, its state and its attempt log as /v1/tasks
//!   answers them; `task_times`: a task's times as a request writes them.
//! - `canonical_path`: paths in their one spelling.
//! - `horizons`: the retry horizon of a task that names none, its
//!   destination's own where it has one.
//! - `openapi`: the OpenAPI document, from the handlers' annotations.

mod audit;
mod auth;
mod batch;
mod body;
mod caller;
pub mod canonical_path;
mod destination_settings;
mod destination_stats;
mod destination_switch;
mod destinations;
mod error;
mod failures;
pub mod horizons;
mod listings;
mod openapi;
mod payload;
mod reminder_changes;
mod reminder_put;
mod replays;
mod scopes;
mod secrets;
mod task_changes;
mod task_times;
mod task_views;
mod tasks;
mod tokens;

use remit::store::{Database, ReportReader, Upkeep};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use actix_web::middleware::from_fn;
use actix_web::{web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use crate::egress::Egress;
use crate::runtime::{Capacity, Restarts, RuntimeStats};
use crate::telemetry::{self, Telemetry};

pub use audit::{ActorView, AuditEntryView, AuditList, AuditQuery, TargetView, DEFAULT_AUDIT_PAGE};
pub(crate) use auth::constant_time_eq;
pub use auth::{authenticate, authenticate_hash, authenticate_token};
pub use body::read_object;
pub use caller::{Admin, Caller};
pub use destination_settings::{ChangeDestination, DeletedView};
pub use destination_stats::{DestinationStats, StatsQuery};
pub use destination_switch::DisableDestination;
pub use destinations::{CreateDestination, DestinationView};
pub use error::ApiError;
pub use listings::TaskQuery;
pub use replays::{CancelRequest, JobView, ReplayRequest};
pub use secrets::{CheckedRotation, RotateSecret};
pub use task_changes::RescheduleTask;
pub use task_views::TaskFields;
pub use tasks::{CreateTask, TaskRules};
pub use tokens::{CreateToken, TokenView};

/// What the handlers share; safe to use from every server worker thread.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// A pool of the API's own, so requests cannot take the connections
    /// delivery needs.
    pub store: Database,
    /// Where what only reads and needs no read of its own writes (a
    /// destination's stats) reads: `database.read_url`'s replica, else
    /// `store`.
    pub reports: ReportReader,
    pub rules: TaskRules,
    /// Destinations' own retry horizons, for tasks that name none.
    pub horizons: Arc<horizons::Horizons>,
    /// The bootstrap token (`api.token`): admin, checked in memory.
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
    /// The tracer of each request's span, when tracing is on.
    pub telemetry: Telemetry,
}

impl ApiState {
    /// The API's store as `caller` acts: its admin calls record who made
    /// them in the audit log, in the transaction of the action.
    pub fn acting(&self, caller: &Caller) -> Database {
        self.store.acting_as(caller.actor())
    }
}

/// What tells /readyz that the runtime can make progress: no actor is
/// restart-looping, and no claimed task has sat in memory past a lease.
#[derive(Debug, Clone)]
pub struct Progress {
    pub restarts: Restarts,
    pub capacity: Capacity,
    pub lease: std::time::Duration,
}

impl Progress {
    /// Why the runtime cannot make progress, if it cannot.
    pub fn stuck(&self) -> Option<String> {
        if let Some(actor) = self.restarts.looping() {
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

/// What a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The API with the probes and /metrics: the API's listener when
    /// `metrics.bind` is not set.
    Everything,
    /// The API with the probes, without /metrics (served on a listener of
    /// its own).
    Api,
    /// /metrics and the probes only: the listener of `metrics.bind`.
    Metrics,
}

/// The routes of `listener`, to register on an actix-web app. A path no
/// route matches is 404 and a method a route does not take is 405 (with
/// `Allow`), both with the JSON error body.
pub fn routes(listener: Listener) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        config
            .service(resource("/healthz", "GET").route(web::get().to(healthz)))
            .service(resource("/readyz", "GET").route(web::get().to(readyz)));
        if listener != Listener::Api {
            config.service(resource("/metrics", "GET").route(web::get().to(metrics)));
        }
        if listener != Listener::Metrics {
            configure_api(config);
        }
        config.default_service(web::to(no_route));
    }
}

/// /v1 and the OpenAPI document.
fn configure_api(config: &mut web::ServiceConfig) {
    config
        .app_data(
            web::JsonConfig::default()
                .limit(remit::domain::MAX_PAYLOAD_BYTES + 64 * 1024)
                .error_handler(|e, _| ApiError::from_json(&e).into()),
        )
        .app_data(web::PathConfig::default())
        .app_data(web::QueryConfig::default().error_handler(|e, _| ApiError::from_query(&e).into()))
        .service(resource("/openapi.json", "GET").route(web::get().to(openapi::document)))
        .service(
            web::scope("/v1")
                // The last wrap runs first: the request's span covers
                // everything, failures are logged whatever answers (with
                // the span's trace id), and the token is checked before
                // any handler's extractor reads the body.
                .wrap(from_fn(auth::require_token))
                .wrap(from_fn(failures::log_server_errors))
                .wrap(from_fn(|request: actix_web::dev::ServiceRequest, next| {
                    let telemetry = request
                        .app_data::<web::Data<ApiState>>()
                        .map(|state| state.telemetry.clone())
                        .unwrap_or_default();
                    telemetry::trace_request(telemetry, request, next)
                }))
                .service(
                    v1("/v1/destinations", "GET, POST")
                        .route(web::get().to(listings::destinations))
                        .route(web::post().to(destinations::create)),
                )
                .service(
                    v1("/v1/destinations/{id}/retry-now", "POST")
                        .route(web::post().to(destination_switch::retry_now)),
                )
                .service(
                    v1("/v1/destinations/{id}/enable", "POST")
                        .route(web::post().to(destination_switch::enable)),
                )
                .service(
                    v1("/v1/destinations/{id}/disable", "POST")
                        .route(web::post().to(destination_switch::disable)),
                )
                .service(
                    v1("/v1/destinations/{id}", "GET, PATCH, DELETE")
                        .route(web::get().to(destinations::get))
                        .route(web::patch().to(destination_settings::update))
                        .route(web::delete().to(destination_settings::delete)),
                )
                .service(
                    v1("/v1/destinations/{id}/stats", "GET")
                        .route(web::get().to(destination_stats::get)),
                )
                .service(
                    v1("/v1/destinations/{id}/secrets", "GET, POST")
                        .route(web::get().to(secrets::list))
                        .route(web::post().to(secrets::rotate)),
                )
                .service(
                    v1("/v1/tasks", "GET, POST")
                        .route(web::get().to(listings::tasks))
                        .route(web::post().to(tasks::create)),
                )
                .service(
                    v1("/v1/tasks/batch", "POST")
                        .app_data(
                            web::JsonConfig::default()
                                .limit(batch::MAX_BATCH_BODY)
                                .error_handler(|e, _| ApiError::from_json(&e).into()),
                        )
                        .route(web::post().to(batch::create)),
                )
                // Before /tasks/{id}, which would take `replay` or `cancel`
                // for an id.
                .service(v1("/v1/tasks/replay", "POST").route(web::post().to(replays::create)))
                .service(v1("/v1/tasks/cancel", "POST").route(web::post().to(replays::cancel)))
                .service(v1("/v1/replays/{id}", "GET").route(web::get().to(replays::get)))
                .service(v1("/v1/tasks/{id}", "GET").route(web::get().to(tasks::get)))
                .service(v1("/v1/tasks/{id}/replay", "POST").route(web::post().to(tasks::replay)))
                .service(
                    v1("/v1/tasks/{id}/cancel", "POST").route(web::post().to(task_changes::cancel)),
                )
                .service(
                    v1("/v1/tasks/{id}/reschedule", "POST")
                        .route(web::post().to(task_changes::reschedule)),
                )
                .service(
                    v1("/v1/tasks/{id}/erase", "POST").route(web::post().to(task_changes::erase)),
                )
                .service(
                    v1(
                        "/v1/tenants/{tenant_id}/reminders/{reminder_id}/cancel",
                        "POST",
                    )
                    .route(web::post().to(reminder_changes::cancel_reminder)),
                )
                .service(
                    v1(
                        "/v1/tenants/{tenant_id}/reminders/{reminder_id}/reschedule",
                        "POST",
                    )
                    .route(web::post().to(reminder_changes::reschedule_reminder)),
                )
                .service(
                    v1(
                        "/v1/tenants/{tenant_id}/reminders/{reminder_id}/erase",
                        "POST",
                    )
                    .route(web::post().to(reminder_changes::erase_reminder)),
                )
                .service(
                    v1("/v1/tenants/{tenant_id}/reminders/{reminder_id}", "PUT")
                        .route(web::put().to(reminder_put::put)),
                )
                .service(
                    v1("/v1/tenants/{tenant_id}/erase", "POST")
                        .route(web::post().to(reminder_changes::erase_tenant)),
                )
                .service(
                    v1("/v1/tokens", "GET, POST")
                        .route(web::get().to(tokens::list))
                        .route(web::post().to(tokens::create)),
                )
                .service(v1("/v1/tokens/{id}", "DELETE").route(web::delete().to(tokens::revoke)))
                .service(v1("/v1/audit", "GET").route(web::get().to(audit::list)))
                .default_service(web::to(no_route)),
        );
}

/// The /v1 resource `pattern` (written in full, as `scopes::ROUTES` and
/// the OpenAPI document write it; registered inside the /v1 scope), which
/// admits a caller only as its scopes allow, and answers other methods 405.
fn v1(
    pattern: &'static str,
    allow: &'static str,
) -> actix_web::Resource<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<
            actix_web::body::EitherBody<actix_web::body::BoxBody>,
        >,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let within_scope = pattern.strip_prefix("/v1").unwrap_or(pattern);
    resource(within_scope, allow).wrap(from_fn(move |request, next| {
        auth::require_access(pattern, request, next)
    }))
}

/// A resource whose other methods are answered 405 with `Allow: allow`.
fn resource(path: &str, allow: &'static str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(move || async move {
        Err::<HttpResponse, _>(ApiError::MethodNotAllowed { allow })
    }))
}

/// What a path no route matches gets.
async fn no_route(request: actix_web::HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(format!(
        "no route for {} {}",
        request.method(),
        request.path()
    )))
}

/// Whether the process is alive
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "probes",
    responses((
        status = 200,
        description = "The process runs",
        body = String,
        content_type = "text/plain; charset=utf-8",
        example = "ok",
    )),
)]
async fn healthz() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .body("ok")
}

/// Whether the region can make progress
///
/// Ready when the database answers, the supervisor runs, no actor is
/// restart-looping and no claimed task has sat in memory past a lease.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "readyz",
    tag = "probes",
    responses(
        (status = 200, description = "Ready", body = Readiness),
        (status = 503, description = "Not ready; `stuck` says why when progress is the cause", body = Readiness),
    ),
)]
async fn readyz(state: web::Data<ApiState>) -> HttpResponse {
    let database = state.store.ping().await.is_ok();
    let supervisor = state.running.load(Ordering::SeqCst);
    let stuck = state.progress.stuck();
    let readiness = Readiness {
        database,
        supervisor,
        progress: stuck.is_none(),
        stuck,
    };
    if readiness.database && readiness.supervisor && readiness.progress {
        HttpResponse::Ok().json(readiness)
    } else {
        HttpResponse::ServiceUnavailable().json(readiness)
    }
}

/// What /readyz answers.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"database": true, "supervisor": true, "progress": true, "stuck": null}))]
pub struct Readiness {
    /// The database answers.
    pub database: bool,
    /// The region's supervisor is running.
    pub supervisor: bool,
    /// No actor is restart-looping and no claimed task has sat in memory
    /// past a lease.
    pub progress: bool,
    /// Why the region cannot make progress, when it cannot.
    #[schema(required = true)]
    pub stuck: Option<String>,
}

/// The region's series in the Prometheus text format
///
/// Counts, gauges and a latency histogram only: never a task, tenant or
/// reminder id, and never a payload.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "probes",
    responses((
        status = 200,
        description = "OpenMetrics text",
        body = String,
        content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8",
    )),
)]
async fn metrics(state: web::Data<ApiState>) -> HttpResponse {
    // The series and their labels are defined in `runtime::Metrics`.
    HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(state.stats.metrics.encode())
}
