//! Bearer-token authentication for /v1.

use actix_web::HttpRequest;

use super::{ApiError, ApiState};

/// Accepts the request only with `Authorization: Bearer <token>` matching
/// the configured token. Without a configured token, nothing is accepted.
pub fn authorize(request: &HttpRequest, state: &ApiState) -> Result<(), ApiError> {
    let expected = state.token.as_deref().ok_or(ApiError::Unauthorized)?;
    let given = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or(ApiError::Unauthorized)?;
    if constant_time_eq(given.as_bytes(), expected.as_bytes()) {
        Ok(())
    } else {
        Err(ApiError::Unauthorized)
    }
}

/// Compares without stopping at the first difference, so response times do
/// not reveal how much of a guessed token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn compares_whole_tokens() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret1"));
    }
}
