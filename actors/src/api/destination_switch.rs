//! /v1/destinations/{id}/enable and /disable: an operator takes a
//! destination out of delivery, or brings it back (its waiting tasks then
//! go out under the usual throttle).

use actix_web::{web, HttpResponse};
use remit::domain::{quoted, Destination, DestinationId, InvalidInput};
use remit::store::{Store, StoreError};
use serde::Deserialize;
use utoipa::ToSchema;

use super::body::read_object;
use super::destinations::DestinationView;
use super::error::ErrorBody;
use super::{Admin, ApiError, ApiState};

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
    _admin: Admin,
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
    let d = state.store.disable_destination(&id, reason).await?;
    Ok(HttpResponse::Ok().json(DestinationView::from(&d)))
}

/// Enable a destination
///
/// Clears its failure streak and the reason it was disabled; its waiting
/// tasks go out under the usual throttle.
#[utoipa::path(
    post,
    path = "/v1/destinations/{id}/enable",
    operation_id = "enable_destination",
    tag = "destinations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The destination's id", min_length = 1, max_length = 200)),
    responses(
        (status = 200, description = "Enabled: the stored destination", body = DestinationView),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such destination in this region", body = ErrorBody),
        (status = 422, description = "Not a valid destination id", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn enable(
    state: web::Data<ApiState>,
    _admin: Admin,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = DestinationId::new(&id)?;
    serving(&state, &id).await?;
    let d = state.store.enable_destination(&id).await?;
    Ok(HttpResponse::Ok().json(DestinationView::from(&d)))
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
