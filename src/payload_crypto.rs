//! Payloads at rest: XChaCha20-Poly1305 under a key from configuration.
//!
//! The associated data binds each ciphertext to its `payload_ref` and
//! content type, so a row copied onto another reference does not decrypt.
//! Each sealed payload records the key's fingerprint, so opening it with a
//! different key is reported as exactly that rather than as corrupt data.

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload as AeadInput};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

/// The environment variable that holds the key, in standard base64.
pub const PAYLOAD_KEY_ENV: &str = "REMIT_PAYLOAD_KEY";

const KEY_LEN: usize = 32;
const FINGERPRINT_LEN: usize = 8;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadCryptoError {
    #[error("{PAYLOAD_KEY_ENV}: not standard base64")]
    KeyNotBase64,
    #[error("{PAYLOAD_KEY_ENV}: must decode to {KEY_LEN} bytes, got {0}")]
    KeyLength(usize),
    #[error("sealed with another key (fingerprint {stored}); the configured key is {configured}")]
    WrongKey { stored: String, configured: String },
    #[error("payload failed authentication: the stored ciphertext was altered or belongs to another row")]
    Tampered,
}

/// A 256-bit payload key. Its bytes never reach `Debug` output.
#[derive(Clone)]
pub struct PayloadKey {
    cipher: XChaCha20Poly1305,
    fingerprint: [u8; FINGERPRINT_LEN],
}

/// What the database stores for one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedPayload {
    pub key_fingerprint: Vec<u8>,
    pub nonce: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

impl PayloadKey {
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        let digest = Sha256::digest([b"remit payload key v1:".as_slice(), &bytes].concat());
        let mut fingerprint = [0; FINGERPRINT_LEN];
        fingerprint.copy_from_slice(&digest[..FINGERPRINT_LEN]);
        Self {
            cipher: XChaCha20Poly1305::new(&bytes.into()),
            fingerprint,
        }
    }

    /// Parses the `REMIT_PAYLOAD_KEY` format: 32 bytes in standard base64.
    pub fn from_base64(text: &str) -> Result<Self, PayloadCryptoError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| PayloadCryptoError::KeyNotBase64)?;
        let bytes: [u8; KEY_LEN] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| PayloadCryptoError::KeyLength(b.len()))?;
        Ok(Self::from_bytes(bytes))
    }

    /// A fresh random key, encoded as `from_base64` expects.
    pub fn generate_base64() -> String {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        base64::engine::general_purpose::STANDARD.encode(key)
    }

    pub fn fingerprint(&self) -> &[u8] {
        &self.fingerprint
    }

    pub fn fingerprint_hex(&self) -> String {
        hex(&self.fingerprint)
    }

    pub fn seal(&self, payload_ref: uuid::Uuid, content_type: &str, body: &[u8]) -> SealedPayload {
        self.seal_with(&associated_data(payload_ref, content_type), body)
    }

    /// Seals a destination's signing secret, bound to the secret's id and
    /// its destination, so a row copied onto another does not open.
    pub fn seal_secret(&self, secret_id: &str, destination: &str, secret: &str) -> SealedPayload {
        self.seal_with(&secret_data(secret_id, destination), secret.as_bytes())
    }

    /// Opens what [`PayloadKey::seal_secret`] sealed.
    pub fn open_secret(
        &self,
        secret_id: &str,
        destination: &str,
        sealed: &SealedPayload,
    ) -> Result<String, PayloadCryptoError> {
        let bytes = self.open_with(&secret_data(secret_id, destination), sealed)?;
        String::from_utf8(bytes).map_err(|_| PayloadCryptoError::Tampered)
    }

    fn seal_with(&self, aad: &[u8], body: &[u8]) -> SealedPayload {
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        // Encryption with a valid key and a fresh nonce cannot fail for
        // bodies far below the cipher's 256 GiB limit.
        let ciphertext = self
            .cipher
            .encrypt(&nonce, AeadInput { msg: body, aad })
            .unwrap_or_default();
        SealedPayload {
            key_fingerprint: self.fingerprint.to_vec(),
            nonce: nonce.to_vec(),
            ciphertext,
        }
    }

    pub fn open(
        &self,
        payload_ref: uuid::Uuid,
        content_type: &str,
        sealed: &SealedPayload,
    ) -> Result<Vec<u8>, PayloadCryptoError> {
        self.open_with(&associated_data(payload_ref, content_type), sealed)
    }

    fn open_with(&self, aad: &[u8], sealed: &SealedPayload) -> Result<Vec<u8>, PayloadCryptoError> {
        if sealed.key_fingerprint != self.fingerprint {
            return Err(PayloadCryptoError::WrongKey {
                stored: hex(&sealed.key_fingerprint),
                configured: self.fingerprint_hex(),
            });
        }
        if sealed.nonce.len() != 24 {
            return Err(PayloadCryptoError::Tampered);
        }
        self.cipher
            .decrypt(
                XNonce::from_slice(&sealed.nonce),
                AeadInput {
                    msg: &sealed.ciphertext,
                    aad,
                },
            )
            .map_err(|_| PayloadCryptoError::Tampered)
    }
}

impl std::fmt::Debug for PayloadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PayloadKey({})", self.fingerprint_hex())
    }
}

fn associated_data(payload_ref: uuid::Uuid, content_type: &str) -> Vec<u8> {
    [payload_ref.as_bytes().as_slice(), content_type.as_bytes()].concat()
}

/// A secret's associated data: a prefix no payload's can start with (a
/// payload's starts with its 16-byte reference), then the ids.
fn secret_data(secret_id: &str, destination: &str) -> Vec<u8> {
    [
        b"remit signing secret v1\0".as_slice(),
        secret_id.as_bytes(),
        b"\0",
        destination.as_bytes(),
    ]
    .concat()
}

/// A fingerprint as people read it.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> PayloadKey {
        PayloadKey::from_bytes([byte; KEY_LEN])
    }

    #[test]
    fn round_trip_and_ciphertext_hides_the_body() {
        let r = uuid::Uuid::new_v4();
        let sealed = key(1).seal(r, "application/json", b"{\"dob\":\"1970-01-01\"}");
        assert!(!sealed.ciphertext.windows(3).any(|w| w == b"dob"));
        assert_eq!(
            key(1).open(r, "application/json", &sealed).unwrap(),
            b"{\"dob\":\"1970-01-01\"}"
        );
    }

    #[test]
    fn wrong_key_is_named_not_garbage() {
        let r = uuid::Uuid::new_v4();
        let sealed = key(1).seal(r, "text/plain", b"x");
        assert!(matches!(
            key(2).open(r, "text/plain", &sealed),
            Err(PayloadCryptoError::WrongKey { .. })
        ));
    }

    #[test]
    fn ciphertext_is_bound_to_its_row() {
        let sealed = key(1).seal(uuid::Uuid::new_v4(), "text/plain", b"x");
        assert_eq!(
            key(1).open(uuid::Uuid::new_v4(), "text/plain", &sealed),
            Err(PayloadCryptoError::Tampered)
        );
    }

    #[test]
    fn a_secret_opens_only_on_its_own_row() {
        let sealed = key(1).seal_secret("s1", "crm", "whsec_abc");
        assert!(!sealed.ciphertext.windows(5).any(|w| w == b"whsec"));
        assert_eq!(
            key(1).open_secret("s1", "crm", &sealed).unwrap(),
            "whsec_abc"
        );
        for (id, destination) in [("s2", "crm"), ("s1", "erp")] {
            assert_eq!(
                key(1).open_secret(id, destination, &sealed),
                Err(PayloadCryptoError::Tampered)
            );
        }
        assert!(matches!(
            key(2).open_secret("s1", "crm", &sealed),
            Err(PayloadCryptoError::WrongKey { .. })
        ));
    }

    #[test]
    fn key_text_is_validated() {
        assert_eq!(
            PayloadKey::from_base64("!!").unwrap_err(),
            PayloadCryptoError::KeyNotBase64
        );
        assert_eq!(
            PayloadKey::from_base64("AAAA").unwrap_err(),
            PayloadCryptoError::KeyLength(3)
        );
        assert!(PayloadKey::from_base64(&PayloadKey::generate_base64()).is_ok());
    }
}
