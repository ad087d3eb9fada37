//! The HTTP API, served by the same process as the runtime. Everything
//! under /v1 needs a bearer token whose scope the route admits, checked
//! before the body is read; /healthz, /readyz, /metrics and /openapi.json
//! do not.
//!
//! # Layout
//! - `auth`: the bearer token, as middleware in front of /v1: the
//!   bootstrap token or a stored API token, and the route's scope.
//! - `scopes`: which scopes each /v1 route admits, said once.
//! - `state`: what the handlers share, and what tells /readyz the runtime
//!   makes progress.
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
//! - `probes`: /healthz, /readyz and /metrics.
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
mod probes;
mod reminder_changes;
mod reminder_put;
mod replays;
mod scopes;
mod secrets;
mod state;
mod task_changes;
mod task_times;
mod task_views;
mod tasks;
mod tokens;

use actix_web::middleware::from_fn;
use actix_web::{web, HttpResponse};

use crate::telemetry;

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
pub use state::{ApiState, Progress, TaskRules};
pub use task_changes::RescheduleTask;
pub use task_views::TaskFields;
pub use tasks::CreateTask;
pub use tokens::{CreateToken, TokenView};

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
            .service(resource("/healthz", "GET").route(web::get().to(probes::healthz)))
            .service(resource("/readyz", "GET").route(web::get().to(probes::readyz)));
        if listener != Listener::Api {
            config.service(resource("/metrics", "GET").route(web::get().to(probes::metrics)));
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
