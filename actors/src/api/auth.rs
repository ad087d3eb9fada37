//! Bearer-token authentication and scopes for /v1, checked before anything
//! else.
//!
//! `require_token` wraps the whole /v1 scope, so it runs before any
//! extractor reads or parses the body: a caller without a good token
//! learns nothing about what the API accepts (no field names, no JSON
//! errors) and cannot make the server buffer a body. `require_access`
//! wraps each /v1 resource and is given that resource's pattern, so the
//! scope is decided for the route that will run, whatever spelling of the
//! path reached it; a request no resource takes is never admitted (it is
//! answered 404). Admin handlers check again with the [`Admin`] extractor.
//!
//! A request's token is either the configured `api.token` (the bootstrap
//! token: admin, compared in memory in constant time) or a stored API
//! token, looked up by its SHA-256 on every request: one indexed read, and
//! no cache, so a revocation or an expiry holds on the next request in
//! every process. A token that is unknown, revoked or expired answers 401;
//! a known token without the route's scope (`scopes::ROUTES`) answers 403;
//! a database that does not answer, 503.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, HttpRequest};
use remit::domain::{token_hash, TokenHash, TOKEN_PREFIX};
use remit::store::{ApiTokens, Database};

use super::caller::Caller;
use super::error::ApiError;
use super::scopes;
use super::state::ApiState;

/// Middleware for the /v1 scope: answers 401 or 503 unless the request
/// carries a usable token; otherwise hands the [`Caller`] on, for
/// [`require_access`] and the handler.
pub async fn require_token<B: MessageBody + 'static>(
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let Some(state) = request.app_data::<web::Data<ApiState>>().cloned() else {
        return Ok(request
            .error_response(ApiError::Unauthorized)
            .map_into_right_body());
    };
    match authenticate(request.request(), &state).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            Ok(next.call(request).await?.map_into_left_body())
        }
        Err(e) => Ok(request.error_response(e).map_into_right_body()),
    }
}

/// Middleware for one /v1 resource, whose pattern (as `scopes::ROUTES`
/// writes it) is `pattern`: answers 403 unless the caller's scope and
/// tenant limit admit the request's method there.
pub async fn require_access<B: MessageBody + 'static>(
    pattern: &'static str,
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    let admitted = match request.extensions().get::<Caller>() {
        Some(caller) => admit(request.method().as_str(), pattern, caller),
        None => Err(ApiError::Unauthorized),
    };
    match admitted {
        Ok(()) => Ok(next.call(request).await?.map_into_left_body()),
        Err(e) => Ok(request.error_response(e).map_into_right_body()),
    }
}

/// Who the request's token is: the bootstrap token, or a stored token that
/// is neither revoked nor expired.
pub async fn authenticate(request: &HttpRequest, state: &ApiState) -> Result<Caller, ApiError> {
    let given = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .ok_or(ApiError::Unauthorized)?;
    authenticate_token(given, &state.store, state.token.as_deref()).await
}

/// Who `given` is, whatever carried it (a bearer header, the console's
/// sign-in form): the bootstrap token, or a stored token that is neither
/// revoked nor expired.
pub async fn authenticate_token(
    given: &str,
    store: &Database,
    bootstrap: Option<&str>,
) -> Result<Caller, ApiError> {
    if let Some(bootstrap) = bootstrap {
        if constant_time_eq(given.as_bytes(), bootstrap.as_bytes()) {
            return Ok(Caller::Bootstrap);
        }
    }
    // Only tokens remit made are looked up: anything else cannot match.
    if !given.starts_with(TOKEN_PREFIX) {
        return Err(ApiError::Unauthorized);
    }
    stored_token(&token_hash(given), store).await
}

/// Who the token with this SHA-256 is, checked again now: what the
/// console's session keeps instead of the token, so that a revoked or
/// expired token, or a changed bootstrap token, ends its sessions at once.
pub async fn authenticate_hash(
    hash: &TokenHash,
    store: &Database,
    bootstrap: Option<&str>,
) -> Result<Caller, ApiError> {
    if let Some(bootstrap) = bootstrap {
        if equal_hashes(hash, &token_hash(bootstrap)) {
            return Ok(Caller::Bootstrap);
        }
    }
    stored_token(hash, store).await
}

async fn stored_token(hash: &TokenHash, store: &Database) -> Result<Caller, ApiError> {
    let token = store
        .api_token_by_hash(hash)
        .await
        .map_err(ApiError::Unavailable)?
        .ok_or(ApiError::Unauthorized)?;
    if token.usable_at(chrono::Utc::now()) {
        Ok(Caller::Token(token))
    } else {
        Err(ApiError::Unauthorized)
    }
}

/// Whether `caller` may call `method` on the route `pattern`.
fn admit(method: &str, pattern: &str, caller: &Caller) -> Result<(), ApiError> {
    let Some(access) = scopes::access(method, pattern) else {
        return Ok(());
    };
    if !access.scopes.contains(&caller.scope()) {
        return Err(ApiError::Forbidden {
            field: None,
            message: format!(
                "this token's scope is {}; this operation needs {}",
                caller.scope(),
                access
                    .scopes
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        });
    }
    if caller.tenant_limited() && !access.per_tenant {
        return Err(ApiError::Forbidden {
            field: None,
            message: "this token is limited to tenants; this operation concerns every tenant"
                .into(),
        });
    }
    Ok(())
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
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    equal_hashes(&Sha256::digest(a).into(), &Sha256::digest(b).into())
}

/// Compares two hashes in full, whatever the first difference.
fn equal_hashes(a: &TokenHash, b: &TokenHash) -> bool {
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
