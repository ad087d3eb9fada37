//! Request bodies: one JSON object, read into the endpoint's type.
//!
//! The extractor (`web::Json<Box<RawValue>>`, configured in `configure`)
//! checks the content type, the size limit and the JSON syntax; this reads
//! the value it kept. serde's derived structs would also take an array of
//! the fields in order (`["clinic-1", "renewal-42", …]`); the API takes
//! objects only, so anything else is 400. A value of the wrong type is 400
//! with `field` naming its field; the message is serde's, which may quote
//! the value back to the caller who sent it (a payload is kept raw and is
//! never read here, so never quoted).

use remit::domain::Setting;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use super::error::ApiError;

/// Reads `text`, one JSON value, as a `T`; only an object is accepted.
pub fn read_object<T: DeserializeOwned>(text: &str) -> Result<T, ApiError> {
    if !text.trim_start().starts_with('{') {
        return Err(ApiError::BadRequest {
            field: None,
            message: "must be a JSON object".into(),
        });
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(refusal)?;
    deserializer.end().map_err(|e| ApiError::BadRequest {
        field: None,
        message: e.to_string(),
    })?;
    Ok(value)
}

/// An optional integer field that also takes a number with no fraction
/// (`20.0`, `2e1`), as JSON Schema counts it an integer; `null` is absent.
/// A value outside `T`'s range is refused, naming the field.
pub fn optional_whole<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    struct Whole<T>(std::marker::PhantomData<T>);

    impl<T: TryFrom<i64> + TryFrom<u64>> Whole<T> {
        fn out_of_range<E: serde::de::Error>(&self, unexpected: serde::de::Unexpected) -> E {
            E::invalid_value(unexpected, &"an integer in range")
        }
    }

    impl<'de, T: TryFrom<i64> + TryFrom<u64>> serde::de::Visitor<'de> for Whole<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an integer, or null")
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }

        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Option<T>, D2::Error> {
            d.deserialize_any(self)
        }

        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Option<T>, E> {
            T::try_from(v)
                .map(Some)
                .map_err(|_| self.out_of_range(serde::de::Unexpected::Unsigned(v)))
        }

        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Option<T>, E> {
            T::try_from(v)
                .map(Some)
                .map_err(|_| self.out_of_range(serde::de::Unexpected::Signed(v)))
        }

        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Option<T>, E> {
            // Within i64's range a float with no fraction is that integer.
            if v.fract() == 0.0 && (-9.2e18..9.2e18).contains(&v) {
                #[allow(clippy::cast_possible_truncation)]
                self.visit_i64(v as i64)
            } else {
                Err(E::invalid_value(
                    serde::de::Unexpected::Float(v),
                    &"an integer",
                ))
            }
        }
    }

    deserializer.deserialize_option(Whole(std::marker::PhantomData))
}

/// A setting a change may leave out (keep it), give as `null` (back to
/// the runtime's value) or give a whole number: with
/// `#[serde(default, deserialize_with = "settable_whole")]`, serde calls
/// this only for a field that is present.
pub fn settable_whole<'de, D, T>(deserializer: D) -> Result<Setting<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    Ok(match optional_whole(deserializer)? {
        Some(v) => Setting::Set(v),
        None => Setting::Reset,
    })
}

/// [`settable_whole`] for any other value (a rate in requests per second).
pub fn settable<'de, D, T>(deserializer: D) -> Result<Setting<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    Ok(match Option::<T>::deserialize(deserializer)? {
        Some(v) => Setting::Set(v),
        None => Setting::Reset,
    })
}

/// How a destination setting's value is read: a rate as any number, a
/// count or a number of seconds only as a whole one.
pub trait SettingJson: Sized {
    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Setting<Self>, D::Error>;
}

impl SettingJson for f64 {
    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Setting<Self>, D::Error> {
        settable(deserializer)
    }
}

impl SettingJson for u32 {
    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Setting<Self>, D::Error> {
        settable_whole(deserializer)
    }
}

impl SettingJson for i64 {
    fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Setting<Self>, D::Error> {
        settable_whole(deserializer)
    }
}

/// [`settable`] or [`settable_whole`], as the setting's type reads.
pub fn setting<'de, D, T>(deserializer: D) -> Result<Setting<T>, D::Error>
where
    D: Deserializer<'de>,
    T: SettingJson,
{
    T::read(deserializer)
}

/// The field at fault: serde names a missing or unknown field in its
/// message (the path is then the object's); any other error happened
/// inside the field the path names.
fn refusal(error: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let path = error.path().to_string();
    let message = error.into_inner().to_string();
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .and_then(|rest| rest.split('`').next())
        .map(str::to_owned);
    let field = named.or_else(|| (path != "." && path != "?").then_some(path));
    ApiError::BadRequest { field, message }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::read_object;
    use crate::api::error::ApiError;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        name: String,
        seconds: Option<u64>,
        #[serde(default, deserialize_with = "super::optional_whole")]
        count: Option<u32>,
    }

    fn refused(text: &str) -> (Option<String>, String) {
        match read_object::<Body>(text) {
            Err(ApiError::BadRequest { field, message }) => (field, message),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn only_objects_are_read() {
        assert!(read_object::<Body>(r#"{"name": "a"}"#).is_ok());
        for text in [r#"["a", 1]"#, "[]", "\"a\"", "1", "null", " [\"a\"]"] {
            assert_eq!(refused(text), (None, "must be a JSON object".into()));
        }
    }

    #[test]
    fn whole_numbers_are_integers_as_json_schema_counts_them() {
        for (text, count) in [
            (r#"{"name": "a", "count": 20}"#, Some(20)),
            (r#"{"name": "a", "count": 20.0}"#, Some(20)),
            (r#"{"name": "a", "count": 2e1}"#, Some(20)),
            (r#"{"name": "a", "count": null}"#, None),
            (r#"{"name": "a"}"#, None),
        ] {
            assert_eq!(read_object::<Body>(text).unwrap().count, count, "{text}");
        }
    }

    #[test]
    fn errors_name_the_field_not_the_value() {
        let cases = [
            (r#"{"name": 5}"#, "name"),
            (r#"{"name": true}"#, "name"),
            (r#"{"name": "a", "seconds": 86400.5}"#, "seconds"),
            (r#"{"name": "a", "seconds": -1}"#, "seconds"),
            (r#"{"seconds": 1}"#, "name"),
            (r#"{"name": "a", "other": 1}"#, "other"),
            (r#"{"name": "a", "count": 1.5}"#, "count"),
            (r#"{"name": "a", "count": -1}"#, "count"),
            (r#"{"name": "a", "count": 4294967296}"#, "count"),
            (r#"{"name": "a", "count": "1"}"#, "count"),
        ];
        for (text, field) in cases {
            assert_eq!(refused(text).0.as_deref(), Some(field), "{text}");
        }
    }
}
