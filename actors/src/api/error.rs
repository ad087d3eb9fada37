//! API errors as JSON: `{"error": {"code", "field", "message"}}`. Messages
//! never carry payload bytes.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use remit::domain::InvalidInput;
use remit::store::StoreError;
use serde_json::json;

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
    #[error("{0}")]
    Conflict(String),
    #[error("internal error")]
    Internal(#[source] StoreError),
}

impl ApiError {
    fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized => "unauthorized",
            ApiError::BadRequest { .. } => "bad_request",
            ApiError::Invalid(_) => "invalid",
            ApiError::TooLarge { .. } => "too_large",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::Internal(_) => "internal",
        }
    }

    fn field(&self) -> Option<&str> {
        match self {
            ApiError::BadRequest { field, .. } => field.as_deref(),
            ApiError::Invalid(e) => Some(e.field),
            ApiError::TooLarge { field, .. } => *field,
            _ => None,
        }
    }

    /// A JSON body that serde could not read. serde names the field in
    /// backticks ("missing field `not_before`"); lift it out.
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
        Self::bad_request(error.to_string())
    }

    /// A body serde could not read, from its message.
    pub fn bad_request(message: String) -> Self {
        let field = message
            .split('`')
            .nth(1)
            .filter(|f| f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .map(str::to_owned);
        ApiError::BadRequest { field, message }
    }
}

impl ApiError {
    /// The documented error body, `{"error": {"code", "field", "message"}}`.
    pub fn body(&self) -> serde_json::Value {
        let message = match self {
            ApiError::Invalid(e) => e.reason.clone(),
            other => other.to_string(),
        };
        json!({
            "error": { "code": self.code(), "field": self.field(), "message": message }
        })
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Invalid(invalid) => ApiError::Invalid(invalid),
            StoreError::Conflict { .. } => ApiError::Conflict(e.to_string()),
            StoreError::NotFound { .. } => ApiError::NotFound(e.to_string()),
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
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if matches!(self, ApiError::Unauthorized) {
            response.insert_header(("www-authenticate", "Bearer"));
        }
        response.json(self.body())
    }
}
