//! The headers every console answer carries, error pages included: a
//! Content-Security-Policy that admits only the console's own script and
//! style sheet (no inline script or style, no other origin), no sniffing,
//! no referrer, and no caching of pages that show a region's state.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;

pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; \
base-uri 'none'; connect-src 'self'";

/// Middleware for /console.
pub async fn secure<B: MessageBody + 'static>(
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, actix_web::Error> {
    let mut response = next.call(request).await?;
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-security-policy", CONTENT_SECURITY_POLICY),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
    ] {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    // The assets set their own (long) cache; everything else is live.
    if !headers.contains_key("cache-control") {
        headers.insert(
            HeaderName::from_static("cache-control"),
            HeaderValue::from_static("no-store"),
        );
    }
    Ok(response)
}
