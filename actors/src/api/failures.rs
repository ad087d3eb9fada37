//! Server-side failures of the API, logged with their cause.
//!
//! A 500's body says only "internal error" (the caller needs no more, and
//! the cause may name database internals); the operator needs the whole
//! chain. This middleware logs it once, for every handler, so no handler
//! can forget to. Causes come from the store and never hold payload bytes:
//! payloads reach the database only as ciphertext.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;
use slog::error;

use super::error::ApiError;

use super::state::ApiState;
use crate::telemetry::RequestTrace;
use remit::error_chain;

/// Middleware: logs every 5xx answer with its error chain.
pub async fn log_server_errors(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let log = request
        .app_data::<web::Data<ApiState>>()
        .map(|state| state.log.clone());
    let trace = RequestTrace::of(request.request());
    let response = next.call(request).await?;
    if let (Some(log), Some(failure)) = (log, response.response().error()) {
        if response.status().is_server_error() {
            let cause = match failure.as_error::<ApiError>() {
                Some(api) => error_chain(api),
                None => failure.to_string(),
            };
            let request = response.request();
            let log = match trace.trace_id() {
                Some(trace_id) => log.new(slog::o!("trace_id" => trace_id.to_owned())),
                None => log,
            };
            error!(log, "API request failed";
                "method" => request.method().as_str(),
                "route" => request.match_pattern().unwrap_or_default(),
                "status" => response.status().as_u16(),
                "error" => cause);
        }
    }
    Ok(response)
}
