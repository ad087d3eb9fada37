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

/// remit's id for one logical webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub uuid::Uuid);

impl TaskId {
    pub fn random() -> Self {
        Self(uuid::Uuid::new_v4())
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A data-residency partition. A region's process claims only its own rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    Us,
    Eu,
}

impl Region {
    pub const ALL: [Region; 2] = [Region::Us, Region::Eu];

    pub fn as_str(self) -> &'static str {
        match self {
            Region::Us => "us",
            Region::Eu => "eu",
        }
    }
}

impl FromStr for Region {
    type Err = InvalidInput;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "us" => Ok(Region::Us),
            "eu" => Ok(Region::Eu),
            other => Err(InvalidInput::new(
                "region",
                format!("unknown region {other:?}; accepted: \"us\", \"eu\""),
            )),
        }
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
    fn region_parses_only_known_names() {
        assert_eq!("eu".parse::<Region>().unwrap(), Region::Eu);
        let err = "apac".parse::<Region>().unwrap_err();
        assert_eq!(err.field, "region");
        assert!(err.reason.contains("\"us\""));
    }
}
