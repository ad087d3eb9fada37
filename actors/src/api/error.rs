//! API errors as JSON: `{"error": {"code", "field", "message"}}`. Messages
//! never carry payload bytes.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use remit::domain::InvalidInput;
use remit::store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("missing or wrong bearer token")]
    Unauthorized,
    /// The body is not the JSON this endpoint takes.
    #[error("{message}")]
    BadRequest {
        field: Option<String>,
        message: String,
    },
    #[error("{0}")]
    Invalid(InvalidInput),
    /// The request body, or the payload in it, is over the limit.
    #[error("{} must be at most {limit} bytes", field.unwrap_or("the request body"))]
    TooLarge {
        field: Option<&'static str>,
        limit: usize,
    },
    #[error("{0}")]
    NotFound(String),
    /// A method the route does not take; `allow` lists those it does.
    #[error("this route takes {allow} only")]
    MethodNotAllowed { allow: &'static str },
    #[error("{0}")]
    Conflict(String),
    /// `If-Match` named a version that is no longer the current one.
    #[error("{0}")]
    PreconditionFailed(String),
    #[error("internal error")]
    Internal(#[source] StoreError),
    /// A known token without the scope, or the tenant, the request needs.
    #[error("{message}")]
    Forbidden {
        field: Option<&'static str>,
        message: String,
    },
    /// The token could not be looked up: the database did not answer.
    #[error("the token could not be checked; try again")]
    Unavailable(#[source] StoreError),
}

/// The body of every error answer.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"error": {
    "code": "invalid", "field": "not_before",
    "message": "must be RFC 3339 with an offset, e.g. 2026-08-13T09:00:00Z (input contains invalid characters)"
}}))]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    /// The request field at fault, or `null`.
    #[schema(required = true)]
    pub field: Option<String>,
    /// What was wrong; never contains payload data. A 500 says only
    /// `internal error`.
    pub message: String,
}

/// What kind of error it is, one code per HTTP status: `bad_request` 400,
/// `unauthorized` 401, `forbidden` 403, `not_found` 404,
/// `method_not_allowed` 405, `conflict` 409, `precondition_failed` 412,
/// `too_large` 413, `invalid` 422, `internal` 500, `unavailable` 503.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    Unauthorized,
    BadRequest,
    Invalid,
    TooLarge,
    NotFound,
    MethodNotAllowed,
    Conflict,
    PreconditionFailed,
    Internal,
    Forbidden,
    Unavailable,
}

impl ApiError {
    fn code(&self) -> ErrorCode {
        match self {
            ApiError::Unauthorized => ErrorCode::Unauthorized,
            ApiError::BadRequest { .. } => ErrorCode::BadRequest,
            ApiError::Invalid(_) => ErrorCode::Invalid,
            ApiError::TooLarge { .. } => ErrorCode::TooLarge,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::MethodNotAllowed { .. } => ErrorCode::MethodNotAllowed,
            ApiError::Conflict(_) => ErrorCode::Conflict,
            ApiError::PreconditionFailed(_) => ErrorCode::PreconditionFailed,
            ApiError::Internal(_) => ErrorCode::Internal,
            ApiError::Forbidden { .. } => ErrorCode::Forbidden,
            ApiError::Unavailable(_) => ErrorCode::Unavailable,
        }
    }

    fn field(&self) -> Option<&str> {
        match self {
            ApiError::BadRequest { field, .. } => field.as_deref(),
            ApiError::Invalid(e) => Some(e.field),
            ApiError::TooLarge { field, .. } => *field,
            ApiError::Forbidden { field, .. } => *field,
            _ => None,
        }
    }

    /// A body the extractor refused: not `application/json`, over the
    /// limit, or not JSON at all. Such an error names no field (one that
    /// does comes from `body::read_object`).
    pub fn from_json(error: &actix_web::error::JsonPayloadError) -> Self {
        use actix_web::error::JsonPayloadError;
        if let JsonPayloadError::Overflow { limit }
        | JsonPayloadError::OverflowKnownLength { limit, .. } = error
        {
            return ApiError::TooLarge {
                field: None,
                limit: *limit,
            };
        }
        ApiError::BadRequest {
            field: None,
            message: error.to_string(),
        }
    }
}

impl ApiError {
    /// A query string that does not fit the route's parameters.
    pub fn from_query(error: &actix_web::error::QueryPayloadError) -> Self {
        ApiError::BadRequest {
            field: None,
            message: format!("the query string is not what this endpoint takes: {error}"),
        }
    }

    /// The documented error body, `{"error": {"code", "field", "message"}}`.
    pub fn body(&self) -> ErrorBody {
        let message = match self {
            ApiError::Invalid(e) => e.reason.clone(),
            other => other.to_string(),
        };
        ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                field: self.field().map(str::to_owned),
                message,
            },
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Invalid(invalid) => ApiError::Invalid(invalid),
            StoreError::Conflict { .. } | StoreError::InUse { .. } => {
                ApiError::Conflict(e.to_string())
            }
            StoreError::NotFound { .. } => ApiError::NotFound(e.to_string()),
            StoreError::Stale { .. } => ApiError::PreconditionFailed(e.to_string()),
            other => ApiError::Internal(other),
        }
    }
}

impl From<InvalidInput> for ApiError {
    fn from(e: InvalidInput) -> Self {
        ApiError::Invalid(e)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PreconditionFailed(_) => StatusCode::PRECONDITION_FAILED,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        match self {
            ApiError::Unauthorized => {
                response.insert_header(("www-authenticate", "Bearer"));
            }
            ApiError::MethodNotAllowed { allow } => {
                response.insert_header(("allow", *allow));
            }
            _ => {}
        }
        response.json(self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::{ApiError, ErrorCode};

    #[test]
    fn codes_keep_their_names() {
        let names = [
            (ErrorCode::Unauthorized, "unauthorized"),
            (ErrorCode::BadRequest, "bad_request"),
            (ErrorCode::Invalid, "invalid"),
            (ErrorCode::TooLarge, "too_large"),
            (ErrorCode::NotFound, "not_found"),
            (ErrorCode::MethodNotAllowed, "method_not_allowed"),
            (ErrorCode::Conflict, "conflict"),
            (ErrorCode::Internal, "internal"),
            (ErrorCode::Forbidden, "forbidden"),
            (ErrorCode::Unavailable, "unavailable"),
        ];
        for (code, name) in names {
            assert_eq!(serde_json::to_value(code).unwrap(), name);
        }
    }

    #[test]
    fn the_body_has_the_documented_shape() {
        let body = ApiError::TooLarge {
            field: Some("payload"),
            limit: 10,
        }
        .body();
        assert_eq!(
            serde_json::to_value(body).unwrap(),
            serde_json::json!({"error": {
                "code": "too_large", "field": "payload", "message": "payload must be at most 10 bytes"
            }})
        );
        let body = ApiError::NotFound("no task".into()).body();
        assert_eq!(
            serde_json::to_value(body).unwrap(),
            serde_json::json!({"error": {"code": "not_found", "field": null, "message": "no task"}})
        );
    }
}
