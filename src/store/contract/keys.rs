//! `Keys`: the ring of payload keys a database's payloads and signing
//! secrets are sealed with: the check every process makes at start, and
//! what `remit rekey` needs (a batch re-sealed, the counts under each key,
//! forgetting a key nothing is sealed under any more).

use std::future::Future;

use super::error::StoreError;
use crate::payload_crypto::{hex, PayloadKey};

/// How many rows are sealed under one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyCount {
    /// The key's fingerprint, as people read it.
    pub fingerprint: String,
    pub payloads: i64,
    pub secrets: i64,
}

/// What one batch re-sealed, and where the next starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rekeyed {
    pub payloads: u64,
    pub secrets: u64,
    /// The last payload the batch looked at: the next batch starts after
    /// it. `None` when no payload under an older key was left after the
    /// cursor.
    pub next: Option<uuid::Uuid>,
}

pub trait Keys: Sync {
    /// The ring this store seals and opens with.
    fn payload_key(&self) -> &PayloadKey;

    /// The fingerprints of the keys recorded as ones this database's
    /// payloads are sealed with; on a database that records none yet,
    /// records this store's newest key first (see `payload_keys`).
    fn record_payload_key(&self) -> impl Future<Output = Result<Vec<Vec<u8>>, StoreError>> + Send;

    /// Refuses a key that is not recorded as one this database's payloads
    /// are sealed with; on a database that records none yet, records it.
    /// A key that passes seals the signing secrets still in clear.
    fn check_payload_key(&self) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            let recorded = self.record_payload_key().await?;
            check_ring(self.payload_key(), &recorded)?;
            self.seal_clear_secrets().await.map(|_| ())
        }
    }

    /// Seals, with this store's key, every signing secret still in clear
    /// (from before secrets were sealed); answers how many it sealed.
    fn seal_clear_secrets(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// How many payloads and secrets are sealed under each key.
    fn sealed_counts(&self) -> impl Future<Output = Result<Vec<KeyCount>, StoreError>> + Send;

    /// Re-seals, under the newest key of this store's ring, up to `limit`
    /// payloads after `after` (by reference) and up to `limit` secrets
    /// sealed under an older key, in one short transaction.
    fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> impl Future<Output = Result<Rekeyed, StoreError>> + Send;

    /// Forgets the recorded keys, other than the newest, that nothing is
    /// sealed under any more (so a ring without them starts); answers
    /// their fingerprints.
    fn forget_unused_keys(&self) -> impl Future<Output = Result<Vec<Vec<u8>>, StoreError>> + Send;
}

/// The configured ring passes when it holds every recorded key; the
/// fingerprints it lacks are named.
pub(in crate::store) fn check_ring(
    key: &PayloadKey,
    recorded: &[Vec<u8>],
) -> Result<(), StoreError> {
    let missing: Vec<String> = recorded
        .iter()
        .filter(|f| !key.contains(f))
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
pub(in crate::store) fn may_record(key: &PayloadKey, recorded: &[Vec<u8>]) -> bool {
    recorded.iter().all(|f| key.contains(f))
}
