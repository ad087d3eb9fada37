//! A configuration value that could not be read, told in remit's words:
//! the key as the operator wrote it (`lease.seconds`, or
//! `REMIT_LEASE__SECONDS` from the environment), the value, and what is
//! accepted, instead of the configuration library's own phrasing (Rust
//! type names, upper-cased paths, nested backticks).

use figment::error::{Actual, Kind};
use remit::domain::quoted;

/// One line per problem figment found.
pub fn describe(error: &figment::Error) -> String {
    error
        .clone()
        .into_iter()
        .map(|e| one(&e))
        .collect::<Vec<_>>()
        .join("; ")
}

fn one(error: &figment::Error) -> String {
    let key = error
        .path
        .iter()
        .map(|p| p.to_lowercase())
        .collect::<Vec<_>>()
        .join(".");
    let from_env = error
        .metadata
        .as_ref()
        .is_some_and(|m| m.name.contains("environment"));
    let file = error
        .metadata
        .as_ref()
        .and_then(|m| m.source.as_ref())
        .and_then(|s| s.file_path())
        .map(|p| p.display().to_string());
    let place = match (from_env, file) {
        (true, _) if !key.is_empty() => {
            format!(
                "configuration key {key} (from REMIT_{})",
                error
                    .path
                    .iter()
                    .map(|p| p.to_uppercase())
                    .collect::<Vec<_>>()
                    .join("__")
            )
        }
        (_, Some(file)) if !key.is_empty() => format!("configuration key {key} (in {file})"),
        _ if !key.is_empty() => format!("configuration key {key}"),
        _ => "configuration".to_owned(),
    };
    // A secret given in the wrong form is still a secret: say what was
    // wanted, never what was given.
    let kind = match &error.kind {
        Kind::InvalidType(_, expected) | Kind::InvalidValue(_, expected)
            if SECRETS.contains(&key.as_str()) =>
        {
            return format!("{place}: must be {}", accepted(expected));
        }
        kind => kind,
    };
    format!("{place}: {}", what(kind))
}

/// Keys whose values never appear in a message.
const SECRETS: [&str; 4] = ["payload_key", "payload_keys", "api.token", "database.url"];

fn what(kind: &Kind) -> String {
    match kind {
        Kind::Message(text) => text.clone(),
        Kind::InvalidType(actual, expected) | Kind::InvalidValue(actual, expected) => {
            format!("{} is not {}", value(actual), accepted(expected))
        }
        Kind::InvalidLength(n, expected) => format!("{n} items where {expected} were expected"),
        Kind::UnknownField(field, known) => format!(
            "{} is not a known key; known here: {}",
            quoted(field),
            known.join(", ")
        ),
        Kind::UnknownVariant(name, known) => format!(
            "{} is not accepted; accepted: {}",
            quoted(name),
            known.join(", ")
        ),
        Kind::MissingField(field) => format!("{field} is required"),
        Kind::DuplicateField(field) => format!("{field} is given twice"),
        other => other.to_string(),
    }
}

fn value(actual: &Actual) -> String {
    match actual {
        Actual::Str(text) => quoted(text),
        Actual::Bool(b) => b.to_string(),
        Actual::Unsigned(n) => n.to_string(),
        Actual::Signed(n) => n.to_string(),
        Actual::Float(x) => x.to_string(),
        Actual::Seq => "a list".to_owned(),
        Actual::Map => "a table".to_owned(),
        other => other.to_string(),
    }
}

/// serde's "expected" phrase as an operator reads it.
fn accepted(expected: &str) -> String {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)".to_owned(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "a boolean" => "true or false".to_owned(),
        "a string" => "text".to_owned(),
        "a sequence" => "a list (in the environment, JSON such as [\"a\",\"b\"])".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use figment::providers::Serialized;
    use figment::Figment;

    use super::describe;
    use crate::config::Config;

    fn read(key: &str, value: serde_json::Value) -> String {
        let error = Figment::from(Serialized::defaults(Config::default()))
            .merge(Serialized::default(key, value))
            .extract::<Config>()
            .unwrap_err();
        describe(&error)
    }

    #[test]
    fn a_bad_value_names_its_key_and_what_is_accepted() {
        let text = read("lease.seconds", "soon".into());
        assert!(
            text.contains(r#"lease.seconds: "soon" is not a whole number (0 or more)"#),
            "{text}"
        );
        assert!(!text.contains("u64"), "{text}");
    }

    #[test]
    fn a_secret_of_the_wrong_type_is_not_repeated() {
        let text = read("api.token", 123456789.into());
        assert!(text.contains("api.token: must be text"), "{text}");
        assert!(!text.contains("123456789"), "{text}");
    }

    #[test]
    fn an_unknown_key_lists_the_known_ones_without_nested_quotes() {
        let text = read("foo", 1.into());
        assert!(
            text.contains(r#""foo" is not a known key; known here: region,"#),
            "{text}"
        );
        assert!(!text.contains('`'), "{text}");
    }
}
