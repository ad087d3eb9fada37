//! Sealing and opening: a payload under a data key of its own, sealed in
//! turn under the ring's newest key (the envelope), a reseal that moves
//! only the data key to the newest, and a signing secret under the ring's
//! key directly. Each ciphertext is bound to its row by its associated
//! data.

use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload as AeadInput};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use super::error::PayloadCryptoError;
use super::format::{hex, SealedPayload, ENVELOPE_LEN, KEY_LEN, NONCE_LEN};
use super::key_ring::PayloadKey;

impl PayloadKey {
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

    pub(super) fn seal_with(&self, aad: &[u8], body: &[u8]) -> SealedPayload {
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

pub(super) fn associated_data(payload_ref: uuid::Uuid, content_type: &str) -> Vec<u8> {
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
