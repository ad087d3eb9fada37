//! The idempotency key a webhook carries (`idempotency-key` and
//! `webhook-id`), derived from what the product asked for, not from
//! anything remit chose.
//!
//! The key is `msg_` and the first 26 characters (130 bits) of the
//! lowercase, unpadded base32 (RFC 4648) of the SHA-256 of
//!
//! ```text
//! u64 big-endian byte length of tenant_id ‖ tenant_id ‖
//! u64 big-endian byte length of reminder_id ‖ reminder_id
//! ```
//!
//! so the same (tenant, reminder) always carries the same key: scheduled
//! again after its task was pruned, imported into another store, or
//! scheduled in another region. The lengths keep ("ab", "c") apart from
//! ("a", "bc"). The region is not part of the key.
//!
//! Tasks scheduled before keys were derived carry `msg_` and their task
//! id's 32 hex digits ([`legacy_idempotency_key`]); they keep it. The two
//! forms differ in length, so they can never be equal.

use sha2::{Digest, Sha256};

use super::ids::ReminderId;
use super::ids::TaskId;
use super::ids::TenantId;

/// Base32 characters kept from the digest: 26 × 5 = 130 bits.
const KEY_CHARS: usize = 26;

const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// The key every attempt of (tenant, reminder) carries.
pub fn idempotency_key(tenant: &TenantId, reminder: &ReminderId) -> String {
    let mut digest = Sha256::new();
    for part in [tenant.as_str(), reminder.as_str()] {
        digest.update((part.len() as u64).to_be_bytes());
        digest.update(part.as_bytes());
    }
    format!("msg_{}", base32(&digest.finalize(), KEY_CHARS))
}

/// The key of a task scheduled before keys were derived from (tenant,
/// reminder): its task id's.
pub fn legacy_idempotency_key(id: TaskId) -> String {
    format!("msg_{}", id.0.simple())
}

/// The first `chars` characters of `bytes` in lowercase base32.
fn base32(bytes: &[u8], chars: usize) -> String {
    let mut out = String::with_capacity(chars.min(bytes.len() * 8 / 5 + 1));
    // At most 4 bits wait in `buffer` between bytes.
    let mut buffer: u16 = 0;
    let mut bits: u32 = 0;
    for &byte in bytes {
        buffer = (buffer << 8) | u16::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(BASE32[usize::from((buffer >> bits) & 31)]));
        }
        buffer &= (1 << bits) - 1;
        if out.len() >= chars {
            out.truncate(chars);
            return out;
        }
    }
    if bits > 0 && out.len() < chars {
        out.push(char::from(BASE32[usize::from((buffer << (5 - bits)) & 31)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tenant: &str, reminder: &str) -> String {
        idempotency_key(
            &TenantId::new(tenant).unwrap(),
            &ReminderId::new(reminder).unwrap(),
        )
    }

    #[test]
    fn the_key_is_stable() {
        // Receivers may store these: a change here breaks their
        // deduplication, so it is a fixed vector, not a round trip.
        assert_eq!(
            key("clinic-1", "renewal-42"),
            "msg_7geze44iwclfoejpwsfxgayecu"
        );
        assert_eq!(key("ab", "c"), "msg_maovi5xczt7czb5cxot2gitfs4");
    }

    #[test]
    fn lengths_keep_the_parts_apart() {
        assert_ne!(key("ab", "c"), key("a", "bc"));
        assert_eq!(key("a", "bc"), "msg_h6x2dtzpdgt4ceu35mqm6cmd64");
    }

    #[test]
    fn the_two_forms_never_meet() {
        let derived = key("clinic-1", "renewal-42");
        let legacy = legacy_idempotency_key(TaskId(uuid::Uuid::from_u128(7)));
        assert_eq!(derived.len(), 4 + KEY_CHARS);
        assert_eq!(legacy.len(), 4 + 32);
        assert!(derived[4..].bytes().all(|b| BASE32.contains(&b)));
    }

    #[test]
    fn base32_matches_rfc_4648() {
        // RFC 4648 section 10, lowercased and unpadded.
        for (input, expected) in [
            ("f", "my"),
            ("fo", "mzxq"),
            ("foo", "mzxw6"),
            ("foob", "mzxw6yq"),
            ("fooba", "mzxw6ytb"),
            ("foobar", "mzxw6ytboi"),
        ] {
            assert_eq!(base32(input.as_bytes(), usize::MAX), expected, "{input}");
        }
    }
}
