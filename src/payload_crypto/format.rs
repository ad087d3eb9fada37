//! The sizes of keys, nonces and envelopes, and what the database stores
//! for one payload.

/// The environment variable that holds the key, in standard base64.
pub const PAYLOAD_KEY_ENV: &str = "REMIT_PAYLOAD_KEY";

pub(super) const KEY_LEN: usize = 32;
pub(super) const FINGERPRINT_LEN: usize = 8;
/// XChaCha20-Poly1305's nonce and tag.
pub(super) const NONCE_LEN: usize = 24;
pub(super) const TAG_LEN: usize = 16;
/// A row's `nonce` under a data key: the body's nonce, the data key's
/// nonce, and the data key sealed under the ring's key.
pub(super) const ENVELOPE_LEN: usize = NONCE_LEN + NONCE_LEN + KEY_LEN + TAG_LEN;

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
