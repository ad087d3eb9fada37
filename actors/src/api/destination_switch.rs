//! /v1/destinations/{id}/enable, /disable and /retry-now: an operator
//! takes a destination out of delivery, or brings it back (its waiting
//! tasks then go out under the usual throttle), and brings its retries
//! forward once its receiver is fixed.

use actix_web::{web, HttpResponse};
use remit::domain::{quoted, Destination, DestinationId, InvalidInput, TenantId};
use remit::store::{Changes, Destinations, StoreError};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::body::read_object;
use super::caller::Admin;
use super::destinations::DestinationView;
use super::error::ApiError;
use super::error::ErrorBody;
use super::state::ApiState;

/// The longest reason accepted, in bytes.
pub const MAX_REASON_BYTES: usize = 500;

/// Why an operator disables a destination.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "receiver migrating until Monday"}))]
pub struct DisableDestination {
    /// Recorded as the destination's `disabled_reason`; `manual` when
    /// absent. Not blank, at most 500 bytes, no control characters.
    #[schema(min_length = 1, max_length = 500)]
    reason: Option<String>,
}

impl DisableDestination {
    pub fn new(reason: Option<String>) -> Self {
        Self { reason }
    }

    /// The reason, checked.
    pub fn validate(self) -> Result<Option<String>, InvalidInput> {
        let Some(reason) = self.reason else {
            return Ok(None);
        };
        if reason.trim().is_empty() {
            return Err(InvalidInput::new("reason", "must not be blank when given"));
        }
        if reason.len() > MAX_REASON_BYTES {
            return Err(InvalidInput::new(
                "reason",
                format!("must be at most {MAX_REASON_BYTES} bytes"),
            ));
        }
        if reason.chars().any(char::is_control) {
            return Err(InvalidInput::new(
                "reason",
                "must not contain control characters",
            ));
        }
        Ok(Some(reason))
    }
}

/// Disable a destination
///
/// Its tasks wait, unsent and not failed, until it is enabled (or their
/// retry horizon passes). One already disabled keeps its reason and time.
/// The body is optional.
#[utoipa::path(
    post,
    path = "/v1/destinations/{id}/disable",
    operation_id = "disable_destination",
    tag = "destinations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200)),
    request_body(content = Option<DisableDestination>, content_type = "application/json"),
    responses(
        (status = 200, description = "Disabled: the stored destination", body = DestinationView),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn disable(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    // No body, or JSON `null` (the optional body left out), is no reason.
    let absent = body.iter().all(u8::is_ascii_whitespace) || body.trim_ascii() == b"null";
    let request = if absent {
        DisableDestination::default()
    } else {
        let text = std::str::from_utf8(&body).map_err(|_| ApiError::BadRequest {
            field: None,
            message: "the body is not UTF-8".into(),
        })?;
        read_object::<DisableDestination>(text)?
    };
    let reason = request.validate()?;
    serving(&state, &id).await?;
    let d = state
        .acting(&caller)
        .disable_destination(&id, reason)
        .await?;
    Ok(HttpResponse::Ok().json(DestinationView::from(&d)))
}

/// Whether enabling also brings the destination's retries forward.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EnableQuery {
    /// Also make every task waiting for a retry due now, as
    /// `POST /v1/destinations/{id}/retry-now` does.
    retry_now: Option<bool>,
}

/// Enable a destination
///
/// Clears its failure streak and the reason it was disabled; its waiting
/// tasks go out under the usual throttle, and with `retry_now=true` those
/// waiting for a retry go now rather than when their backoff ends.
#[utoipa::path(
    post,
    path = "/v1/destinations/{id}/enable",
    operation_id = "enable_destination",
    tag = "destinations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200),
           EnableQuery),
    responses(
        (status = 200, description = "Enabled: the stored destination", body = DestinationView),
        (status = 400, description = "A query parameter is not what this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 422, description = "Not a valid destination id", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn enable(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
    query: web::Query<EnableQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    serving(&state, &id).await?;
    let store = state.acting(&caller);
    let d = store.enable_destination(&id).await?;
    if query.retry_now == Some(true) {
        store.retry_now(&id, None).await?;
    }
    Ok(HttpResponse::Ok().json(DestinationView::from(&d)))
}

/// Whose retries to bring forward.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RetryNowQuery {
    /// Only this tenant's tasks.
    #[param(min_length = 1, max_length = 200)]
    tenant_id: Option<String>,
}

/// What a retry-now moved.
#[derive(Debug, Serialize, ToSchema)]
pub struct RetriedNow {
    /// Tasks that were waiting for a retry and are due now.
    pub moved: u64,
}

/// Bring a destination's retries forward
///
/// Every task of the destination waiting for a retry (`retry_wait`)
/// becomes due now, keeping its attempt count and idempotency key: after
/// a receiver is fixed, its tasks need not wait out their backoff. A pause
/// the receiver asked for (Retry-After) still holds. No body.
#[utoipa::path(
    post,
    path = "/v1/destinations/{id}/retry-now",
    operation_id = "retry_destination_now",
    tag = "destinations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200),
           RetryNowQuery),
    responses(
        (status = 200, description = "How many tasks are due now", body = RetriedNow),
        (status = 400, description = "A query parameter is not what this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 422, description = "Not a valid destination or tenant id", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn retry_now(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
    query: web::Query<RetryNowQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    let tenant = query.tenant_id.as_deref().map(TenantId::new).transpose()?;
    serving(&state, &id).await?;
    let moved = state
        .acting(&caller)
        .retry_now(&id, tenant.as_ref())
        .await?;
    Ok(HttpResponse::Ok().json(RetriedNow { moved }))
}

/// The destination, when it is this region's; another region's is
/// answered like a missing one.
async fn serving(state: &ApiState, id: &DestinationId) -> Result<Destination, ApiError> {
    let missing = || ApiError::NotFound(format!("no destination {}", quoted(id.as_str())));
    match state.store.destination(id).await {
        Ok(Some(d)) if d.region == state.rules.serving => Ok(d),
        Ok(_) | Err(StoreError::NotFound { .. }) => Err(missing()),
        Err(e) => Err(e.into()),
    }
}
