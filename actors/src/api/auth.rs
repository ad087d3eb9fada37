//! Bearer-token authentication for /v1, checked before anything else.
//!
//! `require_token` wraps the whole /v1 scope, so it runs before any
//! extractor reads or parses the body: a caller without the token learns
//! nothing about what the API accepts (no field names, no JSON errors) and
//! cannot make the server buffer a body.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, HttpRequest};

use super::{ApiError, ApiState};

/// Middleware for /v1: answers 401 unless the request carries the token.
pub async fn require_token<B: MessageBody + 'static>(
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let allowed = request
        .app_data::<web::Data<ApiState>>()
        .is_some_and(|state| authorize(request.request(), state).is_ok());
    if !allowed {
        return Ok(request
            .error_response(ApiError::Unauthorized)
            .map_into_right_body());
    }
    Ok(next.call(request).await?.map_into_left_body())
}

/// Accepts the request only with `Authorization: Bearer <token>` matching
/// the configured token. Without a configured token, nothing is accepted.
pub fn authorize(request: &HttpRequest, state: &ApiState) -> Result<(), ApiError> {
    let expected = state.token.as_deref().ok_or(ApiError::Unauthorized)?;
    let given = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .ok_or(ApiError::Unauthorized)?;
    if constant_time_eq(given.as_bytes(), expected.as_bytes()) {
        Ok(())
    } else {
        Err(ApiError::Unauthorized)
    }
}

/// The token of a `Bearer` credential. The scheme is matched without
/// regard to case and may be followed by several spaces (RFC 9110, 11.1).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// Compares without stopping at the first difference, so response times do
/// not reveal how much of a guessed token was right. Both sides are hashed
/// first, so the time does not depend on the token's length either, and
/// the comparison always covers the same 32 bytes.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    let (a, b) = (Sha256::digest(a), Sha256::digest(b));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

#[cfg(test)]
mod tests {
    use super::{bearer_token, constant_time_eq};

    #[test]
    fn the_scheme_is_matched_without_regard_to_case() {
        for value in ["Bearer t0k", "bearer t0k", "BEARER t0k", "bEaReR   t0k"] {
            assert_eq!(bearer_token(value), Some("t0k"), "{value}");
        }
        for value in ["Bearer", "Basic t0k", "Bearert0k", " Bearer t0k"] {
            assert_ne!(bearer_token(value), Some("t0k"), "{value}");
        }
    }

    #[test]
    fn compares_whole_tokens() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret1"));
        assert!(!constant_time_eq(b"", b"secret"));
    }
}
