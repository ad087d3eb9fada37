//! The request body a product hands remit. It is health data: it never
//! appears in `Debug` output, logs, metrics or errors.

use std::fmt;

/// Largest body remit stores; receivers rarely accept more and a bound keeps
/// memory per in-flight task predictable.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;

#[derive(Clone, PartialEq, Eq)]
pub struct Payload {
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Payload {
    pub fn json(body: impl Into<Vec<u8>>) -> Self {
        Self {
            content_type: "application/json".to_owned(),
            body: body.into(),
        }
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Payload")
            .field("content_type", &self.content_type)
            .field(
                "body",
                &format_args!("<{} bytes redacted>", self.body.len()),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_body() {
        let shown = format!("{:?}", Payload::json(r#"{"diagnosis":"secret"}"#));
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("22 bytes redacted"));
    }
}
