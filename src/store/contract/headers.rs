//! A destination's custom headers as its rows hold them: a plain value in
//! clear, a secret one sealed with the payload key like a signing secret
//! (bound to the destination and the header's name), with its hint beside
//! it. An export carries the rows as they are, sealed values still sealed.

use super::error::StoreError;
use crate::domain::{CustomHeader, HeaderValue};
use crate::payload_crypto::{PayloadKey, SealedPayload};

/// One header's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderRecord {
    pub name: String,
    pub value: StoredHeader,
}

#[derive(Clone, PartialEq, Eq)]
pub enum StoredHeader {
    Plain(String),
    Sealed {
        sealed: SealedPayload,
        hint: Option<String>,
    },
}

impl std::fmt::Debug for StoredHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoredHeader::Plain(v) => f.debug_tuple("Plain").field(v).finish(),
            StoredHeader::Sealed { sealed, hint } => f
                .debug_struct("Sealed")
                .field("key", &crate::payload_crypto::hex(&sealed.key_fingerprint))
                .field("hint", hint)
                .finish(),
        }
    }
}

/// What a sealed header's value is bound to besides its destination.
fn sealed_id(name: &str) -> String {
    format!("header:{name}")
}

impl HeaderRecord {
    /// The row of a header whose value is known, sealed with `key` when
    /// it is a secret. `None` for a secret given without its value.
    pub(in crate::store) fn seal(
        header: &CustomHeader,
        key: &PayloadKey,
        destination: &str,
    ) -> Option<Self> {
        let value = match &header.value {
            HeaderValue::Plain(v) => StoredHeader::Plain(v.clone()),
            HeaderValue::Secret {
                value: Some(v),
                hint,
            } => StoredHeader::Sealed {
                sealed: key.seal_secret(&sealed_id(&header.name), destination, v),
                hint: hint.clone(),
            },
            HeaderValue::Secret { value: None, .. } => return None,
        };
        Some(Self {
            name: header.name.clone(),
            value,
        })
    }

    /// The row's columns back as a record: a value in clear, or the
    /// sealed parts with their hint.
    pub(in crate::store) fn from_columns(
        name: String,
        value: Option<String>,
        sealed: Option<SealedPayload>,
        hint: Option<String>,
    ) -> Result<Self, StoreError> {
        let value = match (value, sealed) {
            (Some(v), None) => StoredHeader::Plain(v),
            (None, Some(sealed)) => StoredHeader::Sealed { sealed, hint },
            _ => {
                return Err(StoreError::Corrupt {
                    column: "destination_headers.value",
                    reason: "neither in clear nor sealed".into(),
                })
            }
        };
        Ok(Self { name, value })
    }

    /// The header for display: a secret's value left out, its hint kept.
    pub fn shown(&self) -> CustomHeader {
        CustomHeader {
            name: self.name.clone(),
            value: match &self.value {
                StoredHeader::Plain(v) => HeaderValue::Plain(v.clone()),
                StoredHeader::Sealed { hint, .. } => HeaderValue::Secret {
                    value: None,
                    hint: hint.clone(),
                },
            },
        }
    }

    /// The header for a send: a secret's value opened with `key`.
    pub(in crate::store) fn opened(
        &self,
        key: &PayloadKey,
        destination: &str,
    ) -> Result<CustomHeader, StoreError> {
        let value = match &self.value {
            StoredHeader::Plain(v) => HeaderValue::Plain(v.clone()),
            StoredHeader::Sealed { sealed, hint } => {
                let id = sealed_id(&self.name);
                let value = key
                    .open_secret(&id, destination, sealed)
                    .map_err(|source| StoreError::Secret {
                        id,
                        destination: destination.to_owned(),
                        source,
                    })?;
                HeaderValue::Secret {
                    value: Some(value),
                    hint: hint.clone(),
                }
            }
        };
        Ok(CustomHeader {
            name: self.name.clone(),
            value,
        })
    }

    /// The same header re-sealed under the newest key of `key`'s ring
    /// (a rekey); a plain one as it is.
    pub(in crate::store) fn resealed(
        &self,
        key: &PayloadKey,
        destination: &str,
    ) -> Result<Self, StoreError> {
        match self.opened(key, destination)? {
            opened @ CustomHeader {
                value: HeaderValue::Secret { .. },
                ..
            } => Ok(Self::seal(&opened, key, destination).unwrap_or_else(|| self.clone())),
            _ => Ok(self.clone()),
        }
    }

    /// The key it is sealed under, if it is sealed.
    pub fn key_fingerprint(&self) -> Option<&[u8]> {
        match &self.value {
            StoredHeader::Plain(_) => None,
            StoredHeader::Sealed { sealed, .. } => Some(&sealed.key_fingerprint),
        }
    }
}
