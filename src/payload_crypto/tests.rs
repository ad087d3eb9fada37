//! The key ring and sealing, with fixed keys.

use base64::Engine as _;

use super::format::{ENVELOPE_LEN, KEY_LEN, NONCE_LEN};
use super::sealing::associated_data;
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
