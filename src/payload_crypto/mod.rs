//! Payloads at rest: XChaCha20-Poly1305 under a key from configuration.
//!
//! The configuration may hold a ring of keys, newest first (to rotate the
//! key): the newest seals, and a sealed value opens with whichever key of
//! the ring has its fingerprint.
//!
//! The associated data binds each ciphertext to its `payload_ref` and
//! content type, so a row copied onto another reference does not decrypt.
//! Each sealed payload records the key's fingerprint, so opening it with a
//! different key is reported as exactly that rather than as corrupt data.
//!
//! A payload is sealed under a data key of its own, a random key made for
//! it and never used again, and only that data key is sealed under the
//! ring's key (envelope encryption). The sealed data key travels in the
//! row's `nonce` column after the body's nonce: the row holds the only
//! copy, so deleting the row (an erasure) destroys the key with the bytes,
//! and a change of the ring's key (`remit rekey`) seals the data key again
//! without touching the body. What that does and does not make final is
//! said in docs/operations.md ("Erasure"): a copy of the row taken before
//! the erasure opens with the ring key it was sealed under, until that key
//! is retired. Rows sealed before data keys (the body under the ring key
//! itself, a nonce of 24 bytes) still open, and a rekey moves them to a
//! data key.
//!
//! # Layout
//! - `key_ring`: [`PayloadKey`], the ring of keys a process holds: read
//!   from configuration, fingerprinted, the keys derived from it.
//! - `sealing`: sealing and opening a payload (its data key, the
//!   envelope, a reseal under the newest key) and a signing secret.
//! - `tests`: both, with fixed keys.

mod key_ring;
mod sealing;
#[cfg(test)]
mod tests;

pub use key_ring::PayloadKey;

/// The environment variable that holds the key, in standard base64.
pub const PAYLOAD_KEY_ENV: &str = "REMIT_PAYLOAD_KEY";

const KEY_LEN: usize = 32;
const FINGERPRINT_LEN: usize = 8;
/// XChaCha20-Poly1305's nonce and tag.
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;
/// A row's `nonce` under a data key: the body's nonce, the data key's
/// nonce, and the data key sealed under the ring's key.
const ENVELOPE_LEN: usize = NONCE_LEN + NONCE_LEN + KEY_LEN + TAG_LEN;

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

    /// A `WrongKey` told apart, knowing the keys recorded for the
    /// database: when the ring holds every one of them, the key that sealed
    /// it is recorded nowhere, and no process's ring opens it.
    pub fn knowing_recorded(self, key: &PayloadKey, recorded: &[Vec<u8>]) -> Self {
        match self {
            PayloadCryptoError::WrongKey { stored, configured }
                if !recorded.is_empty() && recorded.iter().all(|f| key.contains(f)) =>
            {
                PayloadCryptoError::UnknownKey { stored, configured }
            }
            other => other,
        }
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

/// What the database stores for one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedPayload {
    pub key_fingerprint: Vec<u8>,
    pub nonce: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

/// A fingerprint as people read it.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
