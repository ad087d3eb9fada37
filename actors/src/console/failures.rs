//! The console's server-side failures, logged with their cause.
//!
//! A failed page says only that it failed (its cause may name database
//! internals); the operator finds the whole chain in the log, once per
//! answer, whichever page failed. Causes come from the store and never
//! hold payload bytes.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;
use slog::error;

use super::error::ConsoleError;

use super::state::ConsoleState;
use remit::error_chain;

/// Middleware: logs every 5xx answer with its error chain.
pub async fn log_server_errors(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let log = request
        .app_data::<web::Data<ConsoleState>>()
        .map(|state| state.log.clone());
    let response = next.call(request).await?;
    if let (Some(log), Some(failure)) = (log, response.response().error()) {
        if response.status().is_server_error() {
            let cause = match failure.as_error::<ConsoleError>() {
                Some(console) => error_chain(console),
                None => failure.to_string(),
            };
            let request = response.request();
            error!(log, "console page failed";
                "method" => request.method().as_str(),
                "route" => request.match_pattern().unwrap_or_default(),
                "status" => response.status().as_u16(),
                "error" => cause);
        }
    }
    Ok(response)
}
