//! The record of which payload keys a database's payloads and signing
//! secrets are sealed with (the `payload_keys` table), checked before a
//! process seals anything: a payload sealed under a key other processes
//! lack would fail, much later, on every process that tries to send it.
//! A ring that holds every recorded key passes, and its newest key is
//! recorded (a rotation); one that lacks a recorded key is refused, naming
//! the missing fingerprints. `remit rekey` forgets a key once nothing is
//! sealed under it.

use super::StoreError;
use crate::payload_crypto::{hex, PayloadKey};

/// The configured ring passes when it holds every recorded key; the
/// fingerprints it lacks are named.
pub(super) fn judge(key: &PayloadKey, recorded: &[Vec<u8>]) -> Result<(), StoreError> {
    let missing: Vec<String> = recorded
        .iter()
        .filter(|f| !key.holds(f))
        .map(|f| hex(f))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(StoreError::OtherPayloadKey {
        configured: key.fingerprints_hex(),
        missing: missing.join(", "),
    })
}

/// Whether a process with `key` may record its newest key: only when its
/// ring holds every key recorded already (a rotation), so a wrong key is
/// refused rather than recorded beside the right one.
pub(super) fn may_record(key: &PayloadKey, recorded: &[Vec<u8>]) -> bool {
    recorded.iter().all(|f| key.holds(f))
}
