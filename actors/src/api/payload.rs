//! A task's payload exactly as the client sent it.
//!
//! Parsing into `serde_json::Value` and writing it out again would reorder
//! keys and round numbers beyond what an `f64` holds; the receiver must get
//! the bytes the client signed off on. `RawValue` checks that the bytes are
//! one JSON value and keeps them untouched (whitespace around the value is
//! not part of it).

use serde::Deserialize;
use serde_json::value::RawValue;

/// One JSON value, kept byte for byte. Its `Debug` shows the length only:
/// payloads are health data and never reach a log.
#[derive(Deserialize)]
#[serde(transparent)]
pub struct RawPayload(Box<RawValue>);

impl RawPayload {
    /// Checks that `text` is one JSON value and keeps it as it is.
    pub fn parse(text: String) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text).map(Self)
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.0.get().as_bytes()
    }

    pub fn len(&self) -> usize {
        self.0.get().len()
    }
}

impl std::fmt::Debug for RawPayload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawPayload({} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::RawPayload;

    #[test]
    fn keeps_key_order_and_big_numbers() {
        let text = r#"{"z":1,"a":{"y":2,"b":3},"big":123456789012345678901234567890}"#;
        let payload = RawPayload::parse(text.to_owned()).unwrap();
        assert_eq!(payload.as_bytes(), text.as_bytes());
        assert_eq!(
            format!("{payload:?}"),
            format!("RawPayload({} bytes)", text.len())
        );
    }

    #[test]
    fn refuses_what_is_not_one_json_value() {
        assert!(RawPayload::parse("{\"a\":".into()).is_err());
        assert!(RawPayload::parse("1 2".into()).is_err());
        assert!(RawPayload::parse(String::new()).is_err());
    }
}
