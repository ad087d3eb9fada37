//! The probes and the metrics: /healthz (the process is alive), /readyz
//! (the region can make progress) and /metrics (the Prometheus text
//! format). None needs a token.

use std::sync::atomic::Ordering;

use actix_web::{http::header, web, HttpRequest, HttpResponse};
use remit::store::Upkeep;
use serde::Serialize;
use utoipa::ToSchema;

use super::state::ApiState;
use crate::runtime::exposition;

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
pub(super) async fn healthz() -> HttpResponse {
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
pub(super) async fn readyz(state: web::Data<ApiState>) -> HttpResponse {
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
/// OpenMetrics text when the `Accept` header asks for it (Prometheus's
/// scrapes do), else the Prometheus text format (0.0.4) that `promtool
/// check metrics` reads. Counts, gauges and a latency histogram only:
/// never a task, tenant or reminder id, and never a payload.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "probes",
    responses((
        status = 200,
        description = "The series, in the format the `Accept` header chose",
        content(
            (String = "text/plain; version=0.0.4; charset=utf-8"),
            (String = "application/openmetrics-text; version=1.0.0; charset=utf-8"),
        ),
    )),
)]
pub(super) async fn metrics(request: HttpRequest, state: web::Data<ApiState>) -> HttpResponse {
    // The series and their labels are defined in `runtime::Metrics`.
    let text = state.stats.metrics.encode();
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok());
    if exposition::wants_openmetrics(accept) {
        return HttpResponse::Ok()
            .content_type(exposition::OPENMETRICS_TEXT)
            .body(text);
    }
    HttpResponse::Ok()
        .content_type(exposition::PROMETHEUS_TEXT)
        .body(exposition::to_prometheus_text(&text))
}
