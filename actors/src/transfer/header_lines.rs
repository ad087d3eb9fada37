//! A destination's custom header as an export line carries it: a plain
//! value in clear, a secret one sealed under the payload key (base64
//! parts) with its hint, as its row holds it, never opened on the way.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use remit::payload_crypto::SealedPayload;
use remit::store::{HeaderRecord, StoredHeader};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HeaderLine {
    name: String,
    /// A plain header's value; absent for a secret one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    /// A secret header's sealed value (all three, or none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_fingerprint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nonce: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ciphertext: Option<String>,
    /// A secret's last four characters, when it is long enough to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

pub(super) fn line(record: HeaderRecord) -> HeaderLine {
    let (value, sealed, hint) = match record.value {
        StoredHeader::Plain(v) => (Some(v), None, None),
        StoredHeader::Sealed { sealed, hint } => (None, Some(sealed), hint),
    };
    HeaderLine {
        name: record.name,
        value,
        key_fingerprint: sealed.as_ref().map(|s| STANDARD.encode(&s.key_fingerprint)),
        nonce: sealed.as_ref().map(|s| STANDARD.encode(&s.nonce)),
        ciphertext: sealed.as_ref().map(|s| STANDARD.encode(&s.ciphertext)),
        hint,
    }
}

pub(super) fn record(i: usize, line: HeaderLine) -> Result<HeaderRecord, String> {
    let base64 = |part: &str, text: &str| {
        STANDARD
            .decode(text)
            .map_err(|_| format!("headers[{i}].{part}: not standard base64"))
    };
    let value = match (
        line.value,
        line.key_fingerprint,
        line.nonce,
        line.ciphertext,
    ) {
        (Some(v), None, None, None) if line.hint.is_none() => StoredHeader::Plain(v),
        (None, Some(key_fingerprint), Some(nonce), Some(ciphertext)) => StoredHeader::Sealed {
            sealed: SealedPayload {
                key_fingerprint: base64("key_fingerprint", &key_fingerprint)?,
                nonce: base64("nonce", &nonce)?,
                ciphertext: base64("ciphertext", &ciphertext)?,
            },
            hint: line.hint,
        },
        _ => {
            return Err(format!(
                "headers[{i}]: give a value in clear, or key_fingerprint, nonce and \
                 ciphertext (with a hint, if any) for a sealed one"
            ))
        }
    };
    Ok(HeaderRecord {
        name: line.name,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::super::destination_lines::{destination_line, destination_record};
    use super::super::lines::Line;
    use super::*;

    fn sealed() -> HeaderRecord {
        HeaderRecord {
            name: "authorization".into(),
            value: StoredHeader::Sealed {
                sealed: SealedPayload {
                    key_fingerprint: vec![1; 8],
                    nonce: vec![2; 12],
                    ciphertext: vec![3; 40],
                },
                hint: Some("cdef".into()),
            },
        }
    }

    fn plain() -> HeaderRecord {
        HeaderRecord {
            name: "x-tenant".into(),
            value: StoredHeader::Plain("clinic-a".into()),
        }
    }

    #[test]
    fn a_header_travels_as_its_row_holds_it() {
        for record in [sealed(), plain()] {
            let text = serde_json::to_string(&line(record.clone())).unwrap();
            let back: HeaderLine = serde_json::from_str(&text).unwrap();
            assert_eq!(super::record(0, back).unwrap(), record);
        }
        let text = serde_json::to_string(&line(sealed())).unwrap();
        assert!(!text.contains("\"value\""), "{text}");
    }

    #[test]
    fn a_header_neither_clear_nor_sealed_is_refused_naming_it() {
        for text in [
            r#"{"name":"x-a"}"#,
            r#"{"name":"x-a","value":"v","nonce":"AA=="}"#,
            r#"{"name":"x-a","value":"v","hint":"abcd"}"#,
            r#"{"name":"x-a","key_fingerprint":"AA==","nonce":"AA=="}"#,
        ] {
            let line: HeaderLine = serde_json::from_str(text).unwrap();
            let e = super::record(3, line).unwrap_err();
            assert!(e.starts_with("headers[3]"), "{text}: {e}");
        }
        let line: HeaderLine = serde_json::from_str(
            r#"{"name":"x-a","key_fingerprint":"not base64!","nonce":"AA==","ciphertext":"AA=="}"#,
        )
        .unwrap();
        assert_eq!(
            super::record(1, line).unwrap_err(),
            "headers[1].key_fingerprint: not standard base64"
        );
    }

    #[test]
    fn a_destination_line_carries_settings_headers_and_tombstone_or_none() {
        // As a remit before settings wrote it: the runtime's values apply.
        let old = r#"{"destination":{"id":"crm","region":"us","url":"https://hooks.example/in",
            "signing_secrets":[],"enabled":true,"paused_until":null,"rate_tokens":null,
            "rate_refilled_at":null}}"#;
        let Line::Destination(line) = serde_json::from_str(old).unwrap() else {
            panic!("a destination line");
        };
        let record = destination_record(*line).unwrap();
        assert!(record.destination.settings.is_default());
        assert!(record.headers.is_empty());
        assert_eq!(record.deleted_at, None);

        let mut record = record;
        record.destination.settings.timeout_ms = Some(1500);
        record.destination.settings.late_after_seconds = Some(60);
        record.headers = vec![plain(), sealed()];
        record.destination.settings.headers =
            record.headers.iter().map(HeaderRecord::shown).collect();
        record.deleted_at = Some(chrono::DateTime::UNIX_EPOCH);
        let text = serde_json::to_string(&Line::Destination(Box::new(
            destination_line(record.clone()).unwrap(),
        )))
        .unwrap();
        let Line::Destination(line) = serde_json::from_str(&text).unwrap() else {
            panic!("a destination line");
        };
        assert_eq!(destination_record(*line).unwrap(), record);
    }
}
