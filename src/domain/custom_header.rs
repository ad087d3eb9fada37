//! A custom header a destination sends with every request: its name
//! checked as an HTTP token and kept from the names remit sets itself, its
//! value plain or secret (sealed at rest, never shown back).

use super::ids::InvalidInput;

/// The most custom headers one destination may carry.
pub const MAX_HEADERS: usize = 20;
/// The longest header name accepted.
pub const MAX_HEADER_NAME: usize = 100;
/// The longest header value accepted, in bytes.
pub const MAX_HEADER_VALUE: usize = 4096;
/// Headers remit sets itself, or that belong to the connection: a custom
/// header may not replace them (the signature, the key and the body's
/// framing must stay remit's).
pub const RESERVED_HEADERS: &[&str] = &[
    "connection",
    "content-length",
    "content-type",
    "host",
    "idempotency-key",
    "keep-alive",
    "proxy-authorization",
    "te",
    "trailer",
    "traceparent",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "webhook-id",
    "webhook-signature",
    "webhook-timestamp",
];

/// A header sent with every request to the destination. A secret's value
/// is sealed at rest and never shown back; the domain carries it only on
/// its way in (a change) and out (a send).
#[derive(Clone, PartialEq, Eq)]
pub struct CustomHeader {
    /// Lowercase, as HTTP/2 sends it and as it is compared.
    pub name: String,
    pub value: HeaderValue,
}

#[derive(Clone, PartialEq, Eq)]
pub enum HeaderValue {
    /// Shown back in full.
    Plain(String),
    /// Sealed at rest; `hint` is its last four characters when it is long
    /// enough (16 or more) that they give nothing away, for an operator to
    /// tell two apart. `value` is present on the way in and on a send;
    /// `None` when read for display.
    Secret {
        value: Option<String>,
        hint: Option<String>,
    },
}

impl HeaderValue {
    pub fn is_secret(&self) -> bool {
        matches!(self, HeaderValue::Secret { .. })
    }

    /// The value to send, when it is known here.
    pub fn known(&self) -> Option<&str> {
        match self {
            HeaderValue::Plain(v) => Some(v),
            HeaderValue::Secret { value, .. } => value.as_deref(),
        }
    }

    /// A secret with its value and the hint derived from it.
    pub fn secret(value: String) -> Self {
        let hint = secret_hint(&value);
        HeaderValue::Secret {
            value: Some(value),
            hint,
        }
    }
}

/// The last four characters of a secret of 16 or more.
pub fn secret_hint(value: &str) -> Option<String> {
    let chars: Vec<char> = value.chars().collect();
    (chars.len() >= 16).then(|| chars[chars.len() - 4..].iter().collect())
}

impl std::fmt::Debug for HeaderValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderValue::Plain(v) => f.debug_tuple("Plain").field(v).finish(),
            HeaderValue::Secret { hint, .. } => {
                f.debug_struct("Secret").field("hint", hint).finish()
            }
        }
    }
}

impl std::fmt::Debug for CustomHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = match &self.value {
            HeaderValue::Plain(v) => v.as_str(),
            HeaderValue::Secret { .. } => "<secret>",
        };
        f.debug_struct("CustomHeader")
            .field("name", &self.name)
            .field("value", &value)
            .finish()
    }
}

impl CustomHeader {
    /// Checks a header as asked for: `field` names it in an error (e.g.
    /// `headers[2].name`). The name is an HTTP token, not one remit sets
    /// itself; the value is visible ASCII, spaces and tabs, at most
    /// [`MAX_HEADER_VALUE`] bytes. A secret's value may be absent, to keep
    /// the one stored.
    pub fn new(
        index: usize,
        name: &str,
        value: Option<String>,
        secret: bool,
    ) -> Result<Self, InvalidInput> {
        if index >= MAX_HEADERS {
            return Err(InvalidInput::new(
                "headers",
                format!("at most {MAX_HEADERS} headers"),
            ));
        }
        let field = |part: &str| header_field(index, part);
        let name = name.to_ascii_lowercase();
        if name.is_empty() || name.len() > MAX_HEADER_NAME || !name.bytes().all(is_token_byte) {
            return Err(InvalidInput::new(
                field("name"),
                format!(
                    "must be 1 to {MAX_HEADER_NAME} characters of an HTTP header name \
                     (letters, digits and !#$%&'*+-.^_`|~)"
                ),
            ));
        }
        if RESERVED_HEADERS.contains(&name.as_str()) {
            return Err(InvalidInput::new(
                field("name"),
                format!(
                    "{} is set by remit itself or belongs to the connection; the reserved \
                     names are {}",
                    super::ids::quoted(&name),
                    RESERVED_HEADERS.join(", ")
                ),
            ));
        }
        if let Some(v) = &value {
            if v.len() > MAX_HEADER_VALUE
                || !v.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
            {
                // Never repeated: it may be a credential.
                return Err(InvalidInput::new(
                    field("value"),
                    format!(
                        "must be at most {MAX_HEADER_VALUE} bytes of visible ASCII, spaces \
                         and tabs"
                    ),
                ));
            }
        }
        let value = match (value, secret) {
            (Some(v), false) => HeaderValue::Plain(v),
            (None, false) => {
                return Err(InvalidInput::new(
                    field("value"),
                    "is required unless the header is secret (a secret's value may be left \
                     out to keep the one stored)",
                ))
            }
            (Some(v), true) => HeaderValue::secret(v),
            (None, true) => HeaderValue::Secret {
                value: None,
                hint: None,
            },
        };
        Ok(Self { name, value })
    }
}

/// `headers[i].name` or `headers[i].value`, as a field an error names
/// (`headers` past the last header a destination may have).
pub fn header_field(index: usize, part: &str) -> &'static str {
    const NAMES: [&str; MAX_HEADERS] = [
        "headers[0].name",
        "headers[1].name",
        "headers[2].name",
        "headers[3].name",
        "headers[4].name",
        "headers[5].name",
        "headers[6].name",
        "headers[7].name",
        "headers[8].name",
        "headers[9].name",
        "headers[10].name",
        "headers[11].name",
        "headers[12].name",
        "headers[13].name",
        "headers[14].name",
        "headers[15].name",
        "headers[16].name",
        "headers[17].name",
        "headers[18].name",
        "headers[19].name",
    ];
    const VALUES: [&str; MAX_HEADERS] = [
        "headers[0].value",
        "headers[1].value",
        "headers[2].value",
        "headers[3].value",
        "headers[4].value",
        "headers[5].value",
        "headers[6].value",
        "headers[7].value",
        "headers[8].value",
        "headers[9].value",
        "headers[10].value",
        "headers[11].value",
        "headers[12].value",
        "headers[13].value",
        "headers[14].value",
        "headers[15].value",
        "headers[16].value",
        "headers[17].value",
        "headers[18].value",
        "headers[19].value",
    ];
    let fields = if part == "name" { &NAMES } else { &VALUES };
    fields.get(index).copied().unwrap_or("headers")
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_tokens_and_not_remits_own() {
        assert_eq!(
            CustomHeader::new(0, "Authorization", Some("Bearer x".into()), true)
                .unwrap()
                .name,
            "authorization"
        );
        for bad in ["", "two words", "webhook-signature", "Content-Type", "a:b"] {
            let e = CustomHeader::new(3, bad, Some("v".into()), false).unwrap_err();
            assert_eq!(e.field, "headers[3].name", "{bad}");
        }
    }

    #[test]
    fn a_value_with_a_line_break_is_refused_without_repeating_it() {
        let e = CustomHeader::new(1, "x-key", Some("hunter2\r\nx: y".into()), true).unwrap_err();
        assert_eq!(e.field, "headers[1].value");
        assert!(!e.reason.contains("hunter2"));
    }

    #[test]
    fn only_a_secret_may_leave_its_value_out() {
        assert!(CustomHeader::new(0, "x-a", None, true).is_ok());
        assert_eq!(
            CustomHeader::new(0, "x-a", None, false).unwrap_err().field,
            "headers[0].value"
        );
    }

    #[test]
    fn a_secret_is_hinted_only_when_long_and_never_debugged() {
        assert_eq!(secret_hint("short"), None);
        assert_eq!(secret_hint("0123456789abcdef").as_deref(), Some("cdef"));
        let h = CustomHeader::new(0, "x-key", Some("very-secret-value-1234".into()), true).unwrap();
        assert!(!format!("{h:?}").contains("very-secret"));
    }
}
