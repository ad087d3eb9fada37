//! Paths in their one spelling: a request whose path the router would read
//! differently from how it is written is refused with 400 before anything
//! looks at it.
//!
//! The router decodes percent-encoded bytes before it matches a route, so
//! `/v1/%74okens` runs the handler of `/v1/tokens`. Anything that decides
//! from the path as written (a scope check, a log line, a proxy's rule)
//! would see a different route from the one that runs. No client needs to
//! spell a path that way (RFC 3986, 6.2.2: an encoded unreserved character
//! is equivalent to the character), so remit refuses it, together with the
//! dot segments and empty segments a proxy might fold and remit would not.
//! Reserved characters, and `%` itself, may still be encoded: they are data
//! inside a segment (an id may hold them).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;

use super::error::ApiError;

/// Middleware for every listener: answers 400 to a path that is not
/// canonical (see [`non_canonical`]).
pub async fn refuse_non_canonical<B: MessageBody + 'static>(
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
    if let Some(why) = non_canonical(request.uri().path()) {
        let refused = ApiError::BadRequest {
            field: None,
            message: format!("the request path is not canonical: {why}"),
        };
        return Ok(request.error_response(refused).map_into_right_body());
    }
    Ok(next.call(request).await?.map_into_left_body())
}

/// Why `path` (as written in the request line) is not in its one spelling,
/// or `None` when it is.
pub fn non_canonical(path: &str) -> Option<&'static str> {
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let decoded = bytes
                .get(i + 1..i + 3)
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok());
            match decoded {
                None => return Some("a % not followed by two hex digits"),
                Some(byte) if unreserved(byte) => {
                    return Some("an unreserved character is percent-encoded")
                }
                // `%25` stays: an id may hold a `%`. The router decodes a
                // path once, so `%2574` is never read as `t`.
                Some(_) => i += 3,
            }
        } else {
            i += 1;
        }
    }
    // The first segment is before the leading slash (empty); a trailing
    // slash leaves an empty last segment, which routes treat as their own.
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (n, segment) in segments.iter().enumerate() {
        if *segment == "." || *segment == ".." {
            return Some("a dot segment");
        }
        if segment.is_empty() && n + 1 < segments.len() {
            return Some("an empty segment (a doubled slash)");
        }
    }
    None
}

/// RFC 3986, 2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests {
    use super::non_canonical;

    #[test]
    fn plain_paths_and_encoded_reserved_characters_pass() {
        for path in [
            "/",
            "/v1/tokens",
            "/v1/tasks/0b0e6c44-7d3e-4a53-8f5a-1f2d0c8e9a11",
            "/v1/destinations/crm%2Fus",
            "/v1/destinations/a%20b",
            "/v1/destinations/50%25",
            "/v1/%2574okens",
            "/console/",
            "/v1/tokens/",
        ] {
            assert_eq!(non_canonical(path), None, "{path}");
        }
    }

    #[test]
    fn every_other_spelling_is_refused() {
        for path in [
            "/v1/%74okens",
            "/v1/%54okens",
            "/v1/tokens%2e",
            "/v1/%7e",
            "/v1/%7",
            "/v1/%zz",
            "/v1/./tokens",
            "/v1/x/../tokens",
            "/v1/..",
            "//v1/tokens",
            "/v1//tokens",
        ] {
            assert!(non_canonical(path).is_some(), "{path}");
        }
    }
}
