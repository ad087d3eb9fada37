//! A destination as an export line carries it (its settings, health,
//! signing secrets still sealed, custom headers), and back: every field
//! checked on the way in, naming the field at fault.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use remit::domain::{
    CustomHeader, Destination, DestinationHealth, DestinationId, DestinationSettings,
    DisableOverrides, Region,
};
use remit::payload_crypto::SealedPayload;
use remit::store::{DestinationRecord, HeaderRecord, SecretRecord, StoredValue};
use serde::{Deserialize, Serialize};

use super::header_lines;

macro_rules! destination_line {
    ([{ $($before:tt)* } { $($after:tt)* }]
     $($name:ident: $ty:ident = $least:tt ..= $most:tt, $label:literal, $doc:literal;)*) => {
        #[derive(Default, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(super) struct DestinationLine {
            $($before)*
            // Its own settings: absent when unset, and in a file from an
            // older remit (the runtime's values then apply).
            $(
                #[doc = $doc]
                #[serde(default, skip_serializing_if = "Option::is_none")]
                $name: Option<$ty>,
            )*
            $($after)*
        }

        impl DestinationLine {
            fn with_settings(mut self, s: &DestinationSettings) -> Self {
                $(self.$name = s.$name;)*
                self
            }

            /// Its settings, with `headers` as shown.
            fn settings(&self, headers: Vec<CustomHeader>) -> DestinationSettings {
                DestinationSettings {
                    $($name: self.$name,)*
                    headers,
                }
            }
        }
    };
}

// A destination's line: its fields before its settings, then after them.
remit::destination_settings!(destination_line {
    id: String,
    region: String,
    url: String,
    /// A secret in clear, as files written before secrets were sealed
    /// carry it: imported in clear and sealed at the next start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signing_secret: Option<String>,
    /// Every secret, sealed under the payload key (base64 parts).
    #[serde(default)]
    signing_secrets: Vec<SecretLine>,
    enabled: bool,
    paused_until: Option<DateTime<Utc>>,
    rate_tokens: Option<f64>,
    rate_refilled_at: Option<DateTime<Utc>>,
    /// The destination's health (absent in a file from an older remit).
    #[serde(default)]
    failure_streak: u32,
    #[serde(default)]
    failure_streak_since: Option<DateTime<Utc>>,
    #[serde(default)]
    disabled_reason: Option<String>,
    #[serde(default)]
    disabled_at: Option<DateTime<Utc>>,
    #[serde(default)]
    last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_error_at: Option<DateTime<Utc>>,
    #[serde(default)]
    disable_after_seconds: Option<i64>,
    #[serde(default)]
    disable_after_failures: Option<u32>,
} {
    /// Its custom headers, in order: a plain value in clear, a secret one
    /// sealed under the payload key (base64 parts), as its row holds it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    headers: Vec<header_lines::HeaderLine>,
    /// When it was deleted: the line is its tombstone, kept for the tasks
    /// that ended under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deleted_at: Option<DateTime<Utc>>,
});

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretLine {
    id: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    key_fingerprint: String,
    nonce: String,
    ciphertext: String,
}

pub(super) fn destination_line(record: DestinationRecord) -> Result<DestinationLine, String> {
    let d = record.destination;
    let signing_secrets = record
        .secrets
        .into_iter()
        .map(|s| match s.value {
            StoredValue::Sealed(sealed) => Ok(SecretLine {
                id: s.id,
                created_at: s.created_at,
                expires_at: s.expires_at,
                key_fingerprint: STANDARD.encode(&sealed.key_fingerprint),
                nonce: STANDARD.encode(&sealed.nonce),
                ciphertext: STANDARD.encode(&sealed.ciphertext),
            }),
            StoredValue::Clear(_) => Err(format!(
                "destination {}: a signing secret is not sealed yet; export with \
                 REMIT_PAYLOAD_KEY set, which seals it first",
                d.id
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(DestinationLine {
        id: d.id.to_string(),
        region: d.region.to_string(),
        url: d.url.to_string(),
        signing_secret: None,
        signing_secrets,
        enabled: d.enabled,
        paused_until: d.paused_until,
        rate_tokens: record.rate_tokens,
        rate_refilled_at: record.rate_refilled_at,
        failure_streak: d.health.failure_streak,
        failure_streak_since: d.health.failure_streak_since,
        disabled_reason: d.health.disabled_reason.clone(),
        disabled_at: d.health.disabled_at,
        last_error: d.health.last_error.clone(),
        last_error_at: d.health.last_error_at,
        disable_after_seconds: d.health.overrides.after_seconds,
        disable_after_failures: d.health.overrides.failures,
        headers: record.headers.into_iter().map(header_lines::line).collect(),
        deleted_at: record.deleted_at,
        ..DestinationLine::default()
    }
    .with_settings(&d.settings))
}

pub(super) fn destination_record(line: DestinationLine) -> Result<DestinationRecord, String> {
    let url = url::Url::parse(&line.url).map_err(|e| format!("url: {e}"))?;
    let mut settings = line.settings(Vec::new());
    let base64 = |field: &str, text: &str| {
        STANDARD
            .decode(text)
            .map_err(|_| format!("signing_secrets.{field}: not standard base64"))
    };
    let mut secrets = Vec::with_capacity(line.signing_secrets.len() + 1);
    for s in line.signing_secrets {
        secrets.push(SecretRecord {
            value: StoredValue::Sealed(SealedPayload {
                key_fingerprint: base64("key_fingerprint", &s.key_fingerprint)?,
                nonce: base64("nonce", &s.nonce)?,
                ciphertext: base64("ciphertext", &s.ciphertext)?,
            }),
            id: s.id,
            created_at: s.created_at,
            expires_at: s.expires_at,
        });
    }
    if let Some(secret) = line.signing_secret {
        if secret.is_empty() {
            return Err("signing_secret: must not be empty when given".into());
        }
        secrets.push(SecretRecord {
            id: uuid::Uuid::new_v4().to_string(),
            created_at: Utc::now(),
            expires_at: None,
            value: StoredValue::Clear(secret),
        });
    }
    let headers = line
        .headers
        .into_iter()
        .enumerate()
        .map(|(i, h)| header_lines::record(i, h))
        .collect::<Result<Vec<_>, _>>()?;
    settings.headers = headers.iter().map(HeaderRecord::shown).collect();
    Ok(DestinationRecord {
        destination: Destination {
            id: DestinationId::new(&line.id).map_err(|e| e.to_string())?,
            region: line.region.parse::<Region>().map_err(|e| e.to_string())?,
            url,
            has_signing_secret: !secrets.is_empty(),
            enabled: line.enabled,
            paused_until: line.paused_until,
            health: Box::new(DestinationHealth {
                failure_streak: line.failure_streak,
                failure_streak_since: line.failure_streak_since,
                disabled_reason: line.disabled_reason,
                disabled_at: line.disabled_at,
                last_error: line.last_error,
                last_error_at: line.last_error_at,
                overrides: DisableOverrides::new(
                    line.disable_after_seconds,
                    line.disable_after_failures,
                )
                .map_err(|e| e.to_string())?,
            }),
            settings: Box::new(settings),
        },
        secrets,
        rate_tokens: line.rate_tokens,
        rate_refilled_at: line.rate_refilled_at,
        headers,
        deleted_at: line.deleted_at,
    })
}
