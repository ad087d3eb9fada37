//! Identifiers and the residency region, validated once at the edge.

use std::fmt;
use std::str::FromStr;

/// Longest identifier remit accepts; keeps indexes and logs bounded.
const MAX_ID_LEN: usize = 200;

/// Bad input, naming the field and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct InvalidInput {
    pub field: &'static str,
    pub reason: String,
}

impl InvalidInput {
    pub fn new(field: &'static str, reason: impl Into<String>) -> Self {
        Self {
            field,
            reason: reason.into(),
        }
    }
}

/// A value as a person reads it in a message: in double quotes, with any
/// control character escaped as JSON escapes it (`"u\u0001s"`), never in
/// Rust's debug form (`"u\u{1}s"`).
pub fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                for unit in c.encode_utf16(&mut [0; 2]).iter() {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn checked_id(field: &'static str, value: &str) -> Result<String, InvalidInput> {
    if value.trim().is_empty() {
        return Err(InvalidInput::new(field, "must not be empty"));
    }
    if value.len() > MAX_ID_LEN {
        return Err(InvalidInput::new(
            field,
            format!("must be at most {MAX_ID_LEN} bytes"),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(InvalidInput::new(
            field,
            "must not contain control characters",
        ));
    }
    Ok(value.to_owned())
}

macro_rules! text_id {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn new(value: &str) -> Result<Self, InvalidInput> {
                checked_id($field, value).map(Self)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_id!(
    /// The product's customer that owns a reminder.
    TenantId,
    "tenant_id"
);
text_id!(
    /// The product's own id for the reminder; unique per tenant.
    ReminderId,
    "reminder_id"
);
text_id!(
    /// A registered receiver endpoint.
    DestinationId,
    "destination_id"
);
text_id!(
    /// A line of tasks a receiver needs in order: the tasks of one
    /// destination with the same key are sent one at a time, in order of
    /// `not_before`, then of scheduling.
    OrderingKey,
    "ordering_key"
);

/// remit's id for one logical webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub uuid::Uuid);

impl TaskId {
    /// A new id, time-ordered (UUIDv7): ids made one after another sort
    /// together, so the indexes keyed by task id take each new entry at
    /// their right edge instead of on a random page, which would have to be
    /// read and, after each checkpoint, written to the WAL whole.
    pub fn generate() -> Self {
        Self(uuid::Uuid::now_v7())
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A data-residency partition, named by configuration: a lowercase letter,
/// then up to 31 lowercase letters, digits or '-' ("us", "eu",
/// "ap-southeast"). A region's process claims only its own rows. The name
/// is kept inline, so a region stays `Copy` and parsing one allocates
/// nothing, whoever sends it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Region {
    len: u8,
    name: [u8; Region::MAX_LEN],
}

impl Region {
    pub const MAX_LEN: usize = 32;
    pub const US: Region = Region::known("us");
    pub const EU: Region = Region::known("eu");

    /// A name known to be valid at compile time.
    const fn known(name: &str) -> Region {
        let bytes = name.as_bytes();
        let mut copy = [0; Region::MAX_LEN];
        let mut i = 0;
        while i < bytes.len() {
            copy[i] = bytes[i];
            i += 1;
        }
        Region {
            len: bytes.len() as u8,
            name: copy,
        }
    }

    pub fn new(name: &str) -> Result<Region, InvalidInput> {
        let bytes = name.as_bytes();
        let valid = matches!(bytes.first(), Some(b'a'..=b'z'))
            && bytes.len() <= Region::MAX_LEN
            && bytes
                .iter()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'));
        if !valid {
            return Err(InvalidInput::new(
                "region",
                format!(
                    "{} is not a region name: a lowercase letter, then up to 31 \
                     lowercase letters, digits or '-' (for example \"us\", \"eu\", \"ap-southeast\")",
                    quoted(name)
                ),
            ));
        }
        Ok(Region::known(name))
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored.
        std::str::from_utf8(&self.name[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Region({:?})", self.as_str())
    }
}

impl FromStr for Region {
    type Err = InvalidInput;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Region::new(s)
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_messages_are_quoted_as_json_quotes_them() {
        assert_eq!(quoted("us"), r#""us""#);
        assert_eq!(quoted("u\u{1}s"), r#""u\u0001s""#);
        assert_eq!(quoted("a\"b\\"), r#""a\"b\\""#);
        let err = "u\u{1}s".parse::<Region>().unwrap_err().to_string();
        assert!(err.contains(r#""u\u0001s" is not a region name"#), "{err}");
    }

    #[test]
    fn ids_reject_empty_long_and_control_characters() {
        assert_eq!(TenantId::new(" ").unwrap_err().field, "tenant_id");
        assert!(ReminderId::new(&"x".repeat(201)).is_err());
        assert!(DestinationId::new("a\nb").is_err());
        assert_eq!(
            ReminderId::new("renewal-42").unwrap().as_str(),
            "renewal-42"
        );
    }

    #[test]
    fn a_region_is_any_well_formed_name() {
        assert_eq!("eu".parse::<Region>().unwrap(), Region::EU);
        assert_eq!(
            "ap-southeast".parse::<Region>().unwrap().as_str(),
            "ap-southeast"
        );
        assert_eq!(Region::new(&"a".repeat(32)).unwrap().as_str().len(), 32);
        for bad in [
            "",
            "Us",
            "1us",
            "-us",
            "us_east",
            "eu west",
            &"a".repeat(33),
        ] {
            let err = bad.parse::<Region>().unwrap_err();
            assert_eq!(err.field, "region", "{bad:?}");
        }
        assert!(Region::new("mars!")
            .unwrap_err()
            .reason
            .contains("lowercase letter"));
    }
}
