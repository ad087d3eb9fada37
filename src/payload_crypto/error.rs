//! What sealing and opening can refuse, and why a ring of keys was
//! refused: never a key's text.

use super::format::{KEY_LEN, PAYLOAD_KEY_ENV};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadCryptoError {
    #[error("{PAYLOAD_KEY_ENV}: not standard base64")]
    KeyNotBase64,
    #[error("{PAYLOAD_KEY_ENV}: must decode to {KEY_LEN} bytes, got {0}")]
    KeyLength(usize),
    #[error("sealed with another key (fingerprint {stored}) than those configured ({configured})")]
    WrongKey { stored: String, configured: String },
    /// Sealed under a key that neither this ring nor any key recorded for
    /// the database holds (the store tells this from `WrongKey` when its
    /// ring holds every recorded key): no process opens it.
    #[error(
        "sealed with a key (fingerprint {stored}) that neither this ring ({configured}) nor any \
         key recorded for this database holds"
    )]
    UnknownKey { stored: String, configured: String },
    #[error("payload failed authentication: the stored ciphertext was altered or belongs to another row")]
    Tampered,
}

impl PayloadCryptoError {
    /// Whether another process may open what this one could not: sealed
    /// under a key of another ring (a rotation under way). Otherwise no
    /// key opens it: it was altered, or its key is gone.
    pub fn another_process_may_open(&self) -> bool {
        matches!(self, PayloadCryptoError::WrongKey { .. })
    }
}

/// Why a ring of keys was refused: which key (1 = the newest) and why,
/// never the key's text.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("key {position}: {reason}")]
pub struct RingError {
    pub position: usize,
    pub reason: String,
}
