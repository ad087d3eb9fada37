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

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload as AeadInput};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use sha2::{Digest, Sha256};

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
                if !recorded.is_empty() && recorded.iter().all(|f| key.holds(f)) =>
            {
                PayloadCryptoError::UnknownKey { stored, configured }
            }
            other => other,
        }
    }
}

/// The payload keys of a process: one or more 256-bit keys, newest first
/// (the newest seals; any opens what it sealed). Their bytes never reach
/// `Debug` output.
#[derive(Clone)]
pub struct PayloadKey {
    /// Never empty.
    ring: Vec<OneKey>,
}

#[derive(Clone)]
struct OneKey {
    cipher: XChaCha20Poly1305,
    fingerprint: [u8; FINGERPRINT_LEN],
    /// Keys for other purposes (the web console's session cookies) come
    /// from this, never the payload key itself, so one cannot reveal the
    /// other.
    derivation: Hkdf<Sha256>,
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

impl PayloadKey {
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

    fn newest(&self) -> &OneKey {
        &self.ring[0]
    }

    /// Every key's fingerprint, newest first.
    pub fn fingerprints(&self) -> impl Iterator<Item = &[u8]> {
        self.ring.iter().map(|k| k.fingerprint.as_slice())
    }

    /// Whether a key of the ring has this fingerprint.
    pub fn holds(&self, fingerprint: &[u8]) -> bool {
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

    /// Seals a payload under a fresh data key of its own, sealed in turn
    /// under the newest key of the ring.
    pub fn seal(&self, payload_ref: uuid::Uuid, content_type: &str, body: &[u8]) -> SealedPayload {
        let data_key = XChaCha20Poly1305::generate_key(&mut OsRng);
        let body_nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        // Encryption with a valid key and a fresh nonce cannot fail for
        // bodies far below the cipher's 256 GiB limit.
        let ciphertext = XChaCha20Poly1305::new(&data_key)
            .encrypt(
                &body_nonce,
                AeadInput {
                    msg: body,
                    aad: &associated_data(payload_ref, content_type),
                },
            )
            .unwrap_or_default();
        self.envelope(
            payload_ref,
            content_type,
            &body_nonce,
            &data_key,
            ciphertext,
        )
    }

    /// The row of a body sealed under `data_key`, that key sealed under the
    /// newest key of the ring.
    fn envelope(
        &self,
        payload_ref: uuid::Uuid,
        content_type: &str,
        body_nonce: &[u8],
        data_key: &[u8],
        ciphertext: Vec<u8>,
    ) -> SealedPayload {
        let wrapped = self.seal_with(&data_key_data(payload_ref, content_type), data_key);
        SealedPayload {
            key_fingerprint: wrapped.key_fingerprint,
            nonce: [body_nonce, &wrapped.nonce, &wrapped.ciphertext].concat(),
            ciphertext,
        }
    }

    /// The payload sealed under the newest key of the ring: its data key
    /// sealed again, the body's bytes as they were (a row from before data
    /// keys is opened and sealed under a data key of its own).
    pub fn reseal(
        &self,
        payload_ref: uuid::Uuid,
        content_type: &str,
        sealed: &SealedPayload,
    ) -> Result<SealedPayload, PayloadCryptoError> {
        if sealed.nonce.len() == NONCE_LEN {
            let body = self.open(payload_ref, content_type, sealed)?;
            return Ok(self.seal(payload_ref, content_type, &body));
        }
        let (body_nonce, data_key) = self.data_key(payload_ref, content_type, sealed)?;
        Ok(self.envelope(
            payload_ref,
            content_type,
            &body_nonce,
            &data_key,
            sealed.ciphertext.clone(),
        ))
    }

    /// The body's nonce and the data key of a payload sealed under one.
    fn data_key(
        &self,
        payload_ref: uuid::Uuid,
        content_type: &str,
        sealed: &SealedPayload,
    ) -> Result<(Vec<u8>, Vec<u8>), PayloadCryptoError> {
        if sealed.nonce.len() != ENVELOPE_LEN {
            return Err(PayloadCryptoError::Tampered);
        }
        let (body_nonce, wrapped) = sealed.nonce.split_at(NONCE_LEN);
        let (key_nonce, key_ciphertext) = wrapped.split_at(NONCE_LEN);
        let data_key = self.open_with(
            &data_key_data(payload_ref, content_type),
            &SealedPayload {
                key_fingerprint: sealed.key_fingerprint.clone(),
                nonce: key_nonce.to_vec(),
                ciphertext: key_ciphertext.to_vec(),
            },
        )?;
        if data_key.len() != KEY_LEN {
            return Err(PayloadCryptoError::Tampered);
        }
        Ok((body_nonce.to_vec(), data_key))
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
        let newest = self.newest();
        let ciphertext = newest
            .cipher
            .encrypt(&nonce, AeadInput { msg: body, aad })
            .unwrap_or_default();
        SealedPayload {
            key_fingerprint: newest.fingerprint.to_vec(),
            nonce: nonce.to_vec(),
            ciphertext,
        }
    }

    /// Opens a payload: its data key with the ring's key named by the row,
    /// then the body (or, for a row from before data keys, the body with
    /// the ring's key itself).
    pub fn open(
        &self,
        payload_ref: uuid::Uuid,
        content_type: &str,
        sealed: &SealedPayload,
    ) -> Result<Vec<u8>, PayloadCryptoError> {
        let aad = associated_data(payload_ref, content_type);
        if sealed.nonce.len() == NONCE_LEN {
            return self.open_with(&aad, sealed);
        }
        let (body_nonce, data_key) = self.data_key(payload_ref, content_type, sealed)?;
        XChaCha20Poly1305::new_from_slice(&data_key)
            .map_err(|_| PayloadCryptoError::Tampered)?
            .decrypt(
                XNonce::from_slice(&body_nonce),
                AeadInput {
                    msg: &sealed.ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| PayloadCryptoError::Tampered)
    }

    fn open_with(&self, aad: &[u8], sealed: &SealedPayload) -> Result<Vec<u8>, PayloadCryptoError> {
        let Some(key) = self
            .ring
            .iter()
            .find(|k| k.fingerprint.as_slice() == sealed.key_fingerprint)
        else {
            return Err(PayloadCryptoError::WrongKey {
                stored: hex(&sealed.key_fingerprint),
                configured: self.fingerprints_hex(),
            });
        };
        if sealed.nonce.len() != 24 {
            return Err(PayloadCryptoError::Tampered);
        }
        key.cipher
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
        write!(f, "PayloadKey({})", self.fingerprints_hex())
    }
}

fn associated_data(payload_ref: uuid::Uuid, content_type: &str) -> Vec<u8> {
    [payload_ref.as_bytes().as_slice(), content_type.as_bytes()].concat()
}

/// A data key's associated data: a prefix no payload's can start with,
/// then the payload's reference and content type, so a data key copied
/// onto another row does not open.
fn data_key_data(payload_ref: uuid::Uuid, content_type: &str) -> Vec<u8> {
    [
        b"remit data key v1\0".as_slice(),
        payload_ref.as_bytes(),
        content_type.as_bytes(),
    ]
    .concat()
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

    fn key_text(byte: u8) -> String {
        base64::engine::general_purpose::STANDARD.encode([byte; KEY_LEN])
    }

    #[test]
    fn derived_keys_follow_the_newest_key_and_the_purpose() {
        let (one, two) = (PayloadKey::generate_base64(), PayloadKey::generate_base64());
        let ring = PayloadKey::ring([one.as_str(), two.as_str()]).unwrap();
        let newest = PayloadKey::from_base64(&one).unwrap();
        let older = PayloadKey::from_base64(&two).unwrap();
        assert_eq!(ring.derive("console"), newest.derive("console"));
        assert_ne!(ring.derive("console"), older.derive("console"));
        assert_ne!(ring.derive("console"), ring.derive("other"));
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

    /// A row as remit wrote it before data keys: the body under the ring's
    /// key itself.
    fn legacy(key: &PayloadKey, r: uuid::Uuid, body: &[u8]) -> SealedPayload {
        key.seal_with(&associated_data(r, "text/plain"), body)
    }

    #[test]
    fn each_payload_has_a_data_key_of_its_own_and_a_reseal_leaves_the_body() {
        let r = uuid::Uuid::new_v4();
        let one = key(1).seal(r, "text/plain", b"same body");
        let two = key(1).seal(r, "text/plain", b"same body");
        assert_eq!(one.nonce.len(), ENVELOPE_LEN);
        assert_ne!(
            one.nonce[NONCE_LEN..],
            two.nonce[NONCE_LEN..],
            "two data keys"
        );
        // The ring's key alone does not open the body.
        let body_only = SealedPayload {
            nonce: one.nonce[..NONCE_LEN].to_vec(),
            ..one.clone()
        };
        assert_eq!(
            key(1).open(r, "text/plain", &body_only),
            Err(PayloadCryptoError::Tampered)
        );

        // Resealed under a newer key: the same body bytes, a data key sealed
        // again; the old copy opens only with the old key.
        let rotated = PayloadKey::ring([key_text(2).as_str(), key_text(1).as_str()]).unwrap();
        let resealed = rotated.reseal(r, "text/plain", &one).unwrap();
        assert_eq!(resealed.ciphertext, one.ciphertext, "the body is untouched");
        assert_eq!(resealed.key_fingerprint, key(2).fingerprint());
        assert_eq!(
            key(2).open(r, "text/plain", &resealed).unwrap(),
            b"same body"
        );
        assert!(matches!(
            key(2).open(r, "text/plain", &one),
            Err(PayloadCryptoError::WrongKey { .. })
        ));
    }

    #[test]
    fn a_row_from_before_data_keys_opens_and_a_reseal_gives_it_one() {
        let r = uuid::Uuid::new_v4();
        let old = legacy(&key(1), r, b"renewal");
        assert_eq!(key(1).open(r, "text/plain", &old).unwrap(), b"renewal");
        let moved = key(1).reseal(r, "text/plain", &old).unwrap();
        assert_eq!(moved.nonce.len(), ENVELOPE_LEN);
        assert_eq!(key(1).open(r, "text/plain", &moved).unwrap(), b"renewal");
    }

    #[test]
    fn a_data_key_is_bound_to_its_row() {
        let (r, other) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        let sealed = key(1).seal(r, "text/plain", b"x");
        let theirs = key(1).seal(other, "text/plain", b"y");
        // Another row's data key (with its nonce) on this row's body.
        let swapped = SealedPayload {
            nonce: [&sealed.nonce[..NONCE_LEN], &theirs.nonce[NONCE_LEN..]].concat(),
            ..sealed.clone()
        };
        assert_eq!(
            key(1).open(r, "text/plain", &swapped),
            Err(PayloadCryptoError::Tampered)
        );
        let short = SealedPayload {
            nonce: sealed.nonce[..40].to_vec(),
            ..sealed
        };
        assert_eq!(
            key(1).open(r, "text/plain", &short),
            Err(PayloadCryptoError::Tampered)
        );
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
    fn a_ring_seals_with_the_newest_and_opens_with_any() {
        let b64 = |byte: u8| base64::engine::general_purpose::STANDARD.encode([byte; KEY_LEN]);
        let (new, old) = (b64(2), b64(1));
        let ring = PayloadKey::ring([new.as_str(), old.as_str()]).unwrap();
        let r = uuid::Uuid::new_v4();
        let by_old = key(1).seal(r, "text/plain", b"x");
        assert_eq!(ring.open(r, "text/plain", &by_old).unwrap(), b"x");
        let by_ring = ring.seal(r, "text/plain", b"y");
        assert_eq!(by_ring.key_fingerprint, key(2).fingerprint());
        assert!(matches!(
            key(1).open(r, "text/plain", &by_ring),
            Err(PayloadCryptoError::WrongKey { .. })
        ));
        assert_eq!(ring.fingerprints().count(), 2);
    }

    #[test]
    fn a_bad_ring_names_the_position_and_never_the_key() {
        let good = PayloadKey::generate_base64();
        let cases = [
            (vec![good.as_str(), "!!secretish"], 2, "not standard base64"),
            (
                vec!["AAAA", good.as_str()],
                1,
                "must decode to 32 bytes, got 3",
            ),
            (vec![good.as_str(), good.as_str()], 2, "repeats the key"),
        ];
        for (texts, position, reason) in cases {
            let refused = PayloadKey::ring(texts).unwrap_err();
            assert_eq!(refused.position, position, "{refused}");
            assert!(refused.reason.starts_with(reason), "{refused}");
            assert!(!refused.to_string().contains("secretish"));
            assert!(!refused.to_string().contains(&good));
        }
        assert_eq!(PayloadKey::ring([]).unwrap_err().position, 0);
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
