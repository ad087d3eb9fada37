//! Standard Webhooks signatures: `v1,` + base64(HMAC-SHA256(secret,
//! "{id}.{timestamp}.{body}")), with the secret given as `whsec_<base64>`.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

const SECRET_PREFIX: &str = "whsec_";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
/// Says what is wrong, not which field: the caller names the field (the
/// API's `secret`, `--secret`, `events.secret`).
#[error("must be whsec_ followed by standard base64 of 24 to 64 bytes")]
pub struct BadSecret;

/// The key bytes of a `whsec_<base64>` secret.
pub fn secret_key(secret: &str) -> Result<Vec<u8>, BadSecret> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).ok_or(BadSecret)?;
    let key = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| BadSecret)?;
    if (24..=64).contains(&key.len()) {
        Ok(key)
    } else {
        Err(BadSecret)
    }
}

/// A fresh secret in the form receivers' verification libraries accept.
pub fn generate_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!(
        "{SECRET_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The `webhook-signature` header value.
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC accepts keys of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_validated() {
        assert!(secret_key(&generate_secret()).is_ok());
        assert_eq!(secret_key("abc"), Err(BadSecret));
        assert_eq!(secret_key("whsec_!!!"), Err(BadSecret));
        assert_eq!(secret_key("whsec_AAAA"), Err(BadSecret));
    }

    #[test]
    fn signature_matches_the_published_example() {
        // The example from the Standard Webhooks specification.
        let key = secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let sig = sign(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }
}
