//! The ring of payload keys a process holds: one or more keys, newest
//! first, read from configuration (a key's text is never shown, only its
//! fingerprint), and the keys for other purposes derived from the newest.

use base64::Engine as _;
use chacha20poly1305::aead::{KeyInit, OsRng};
use chacha20poly1305::XChaCha20Poly1305;
use hkdf::Hkdf;
use sha2::{Digest, Sha256};

use super::error::{PayloadCryptoError, RingError};
use super::format::{hex, FINGERPRINT_LEN, KEY_LEN};

/// The payload keys of a process: one or more 256-bit keys, newest first
/// (the newest seals; any opens what it sealed). Their bytes never reach
/// `Debug` output.
#[derive(Clone)]
pub struct PayloadKey {
    /// Never empty.
    pub(super) ring: Vec<OneKey>,
}

#[derive(Clone)]
pub(super) struct OneKey {
    pub(super) cipher: XChaCha20Poly1305,
    pub(super) fingerprint: [u8; FINGERPRINT_LEN],
    /// Keys for other purposes (the web console's session cookies) come
    /// from this, never the payload key itself, so one cannot reveal the
    /// other.
    derivation: Hkdf<Sha256>,
}

impl PayloadKey {
    /// `error` told apart when it is a `WrongKey`, knowing the keys
    /// recorded for the database: when this ring holds every one of them,
    /// the key that sealed it is recorded nowhere, and no process's ring
    /// opens it.
    pub fn knowing_recorded(
        &self,
        error: PayloadCryptoError,
        recorded: &[Vec<u8>],
    ) -> PayloadCryptoError {
        match error {
            PayloadCryptoError::WrongKey { stored, configured }
                if !recorded.is_empty() && recorded.iter().all(|f| self.contains(f)) =>
            {
                PayloadCryptoError::UnknownKey { stored, configured }
            }
            other => other,
        }
    }

    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        let digest = Sha256::digest([b"remit payload key v1:".as_slice(), &bytes].concat());
        let mut fingerprint = [0; FINGERPRINT_LEN];
        fingerprint.copy_from_slice(&digest[..FINGERPRINT_LEN]);
        Self {
            ring: vec![OneKey {
                cipher: XChaCha20Poly1305::new(&bytes.into()),
                fingerprint,
                derivation: Hkdf::<Sha256>::new(Some(b"remit derived keys v1"), &bytes),
            }],
        }
    }

    /// A ring from keys in the `REMIT_PAYLOAD_KEY` format, newest first;
    /// refused when empty, when one does not parse, or when one repeats.
    pub fn ring<'a>(texts: impl IntoIterator<Item = &'a str>) -> Result<Self, RingError> {
        let mut ring: Vec<OneKey> = Vec::new();
        for (i, text) in texts.into_iter().enumerate() {
            let refused = |reason: String| RingError {
                position: i + 1,
                reason,
            };
            let key = match Self::from_base64(text) {
                Ok(key) => key,
                Err(PayloadCryptoError::KeyLength(n)) => {
                    return Err(refused(format!("must decode to {KEY_LEN} bytes, got {n}")))
                }
                Err(_) => return Err(refused("not standard base64".into())),
            };
            let one = key
                .ring
                .into_iter()
                .next()
                .ok_or_else(|| refused("empty".into()))?;
            if ring.iter().any(|k| k.fingerprint == one.fingerprint) {
                return Err(refused(format!(
                    "repeats the key with fingerprint {}",
                    hex(&one.fingerprint)
                )));
            }
            ring.push(one);
        }
        if ring.is_empty() {
            return Err(RingError {
                position: 0,
                reason: "no key given".into(),
            });
        }
        Ok(Self { ring })
    }

    pub(super) fn newest(&self) -> &OneKey {
        &self.ring[0]
    }

    /// Every key's fingerprint, newest first.
    pub fn fingerprints(&self) -> impl Iterator<Item = &[u8]> {
        self.ring.iter().map(|k| k.fingerprint.as_slice())
    }

    /// Whether a key of the ring has this fingerprint.
    pub fn contains(&self, fingerprint: &[u8]) -> bool {
        self.fingerprints().any(|f| f == fingerprint)
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

    /// The newest key's fingerprint: the one new values are sealed with.
    pub fn fingerprint(&self) -> &[u8] {
        &self.newest().fingerprint
    }

    /// A key for `purpose` derived from the newest key with HKDF-SHA256:
    /// every process holding the same ring derives the same bytes, and
    /// they reveal nothing of the payload key.
    pub fn derive(&self, purpose: &str) -> [u8; 64] {
        let mut out = [0; 64];
        // 64 bytes is far below HKDF-SHA256's limit of 255 * 32, so the
        // expansion cannot fail.
        let _ = self
            .newest()
            .derivation
            .expand(purpose.as_bytes(), &mut out);
        out
    }

    pub fn fingerprint_hex(&self) -> String {
        hex(self.fingerprint())
    }

    /// Every fingerprint, newest first, comma-separated.
    pub fn fingerprints_hex(&self) -> String {
        self.fingerprints().map(hex).collect::<Vec<_>>().join(", ")
    }
}

impl std::fmt::Debug for PayloadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PayloadKey({})", self.fingerprints_hex())
    }
}
