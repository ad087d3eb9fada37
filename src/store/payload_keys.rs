//! The record of which payload keys a database's payloads are sealed with
//! (the `payload_keys` table), checked before a process seals anything:
//! a payload sealed under another key would fail, much later, on every
//! process that tries to send it.

use super::StoreError;
use crate::payload_crypto::{hex, PayloadKey};

/// The configured key passes when it is among `recorded`.
pub(super) fn judge(key: &PayloadKey, recorded: &[Vec<u8>]) -> Result<(), StoreError> {
    if recorded.iter().any(|f| f.as_slice() == key.fingerprint()) {
        return Ok(());
    }
    Err(StoreError::OtherPayloadKey {
        configured: key.fingerprint_hex(),
        recorded: recorded
            .iter()
            .map(|f| hex(f))
            .collect::<Vec<_>>()
            .join(", "),
    })
}
