//! Signing secrets at rest: sealed with the payload key (the payloads'
//! AEAD, bound to the secret's id and destination), so a stolen database
//! or export holds no secret in clear. A value in clear is only what came
//! from before secrets were sealed (the old `destinations` column, an old
//! export file); the first process started with the payload key seals it
//! (`Database::check_payload_key`).

use chrono::{DateTime, Utc};

use super::error::StoreError;
use crate::payload_crypto::{PayloadKey, SealedPayload};

/// A secret's value as a row holds it.
#[derive(Clone, PartialEq, Eq)]
pub enum StoredValue {
    Sealed(SealedPayload),
    /// From before secrets were sealed; sealed at the next start.
    Clear(String),
}

impl std::fmt::Debug for StoredValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoredValue::Sealed(sealed) => f
                .debug_tuple("Sealed")
                .field(&crate::payload_crypto::hex(&sealed.key_fingerprint))
                .finish(),
            StoredValue::Clear(_) => f.write_str("Clear(<redacted>)"),
        }
    }
}

impl StoredValue {
    /// The row's columns: the value in clear, or the sealed parts.
    pub(in crate::store) fn from_columns(
        secret: Option<String>,
        key_fingerprint: Option<Vec<u8>>,
        nonce: Option<Vec<u8>>,
        ciphertext: Option<Vec<u8>>,
    ) -> Result<Self, StoreError> {
        match (secret, key_fingerprint, nonce, ciphertext) {
            (None, Some(key_fingerprint), Some(nonce), Some(ciphertext)) => {
                Ok(StoredValue::Sealed(SealedPayload {
                    key_fingerprint,
                    nonce,
                    ciphertext,
                }))
            }
            (Some(secret), None, None, None) => Ok(StoredValue::Clear(secret)),
            _ => Err(StoreError::Corrupt {
                column: "destination_secrets.secret",
                reason: "neither in clear nor sealed".into(),
            }),
        }
    }

    /// The value, opened with `key` when sealed.
    pub(in crate::store) fn open(
        &self,
        key: &PayloadKey,
        id: &str,
        destination: &str,
    ) -> Result<String, StoreError> {
        match self {
            StoredValue::Clear(secret) => Ok(secret.clone()),
            StoredValue::Sealed(sealed) => {
                key.open_secret(id, destination, sealed)
                    .map_err(|source| StoreError::Secret {
                        id: id.to_owned(),
                        destination: destination.to_owned(),
                        source,
                    })
            }
        }
    }
}

/// A secret as exported and imported: its row, value still sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRecord {
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub value: StoredValue,
}
