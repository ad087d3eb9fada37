//! Re-sealing under the newest payload key (`remit rekey`), in small
//! batches, each one short transaction: a payload row or a secret row is
//! rewritten whole (its key fingerprint, nonce and ciphertext together),
//! so a process reading it at the same moment sees the old sealing or the
//! new one, both of which its ring opens. What it needs from every
//! backend: a batch, the counts under each key, and forgetting a key
//! nothing is sealed under any more.

use crate::payload_crypto::hex;
use crate::store::contract::KeyCount;

/// Counts by fingerprint from the two tables' groupings: every key that
/// holds something, sorted by fingerprint.
pub(in crate::store) fn merge_counts(
    payloads: Vec<(Vec<u8>, i64)>,
    secrets: Vec<(Vec<u8>, i64)>,
) -> Vec<KeyCount> {
    let mut by_key: std::collections::BTreeMap<String, KeyCount> = Default::default();
    for (f, n) in payloads {
        entry(&mut by_key, &f).payloads += n;
    }
    for (f, n) in secrets {
        entry(&mut by_key, &f).secrets += n;
    }
    by_key.into_values().collect()
}

fn entry<'a>(
    by_key: &'a mut std::collections::BTreeMap<String, KeyCount>,
    fingerprint: &[u8],
) -> &'a mut KeyCount {
    let fingerprint = hex(fingerprint);
    by_key.entry(fingerprint.clone()).or_insert(KeyCount {
        fingerprint,
        payloads: 0,
        secrets: 0,
    })
}
