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

use serde::de::DeserializeOwned;

use super::ApiError;

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
    use crate::api::ApiError;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        name: String,
        seconds: Option<u64>,
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
    fn errors_name_the_field_not_the_value() {
        let cases = [
            (r#"{"name": 5}"#, "name"),
            (r#"{"name": true}"#, "name"),
            (r#"{"name": "a", "seconds": 86400.5}"#, "seconds"),
            (r#"{"name": "a", "seconds": -1}"#, "seconds"),
            (r#"{"seconds": 1}"#, "name"),
            (r#"{"name": "a", "other": 1}"#, "other"),
        ];
        for (text, field) in cases {
            assert_eq!(refused(text).0.as_deref(), Some(field), "{text}");
        }
    }
}
