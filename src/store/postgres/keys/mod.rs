//! `Keys` on PostgreSQL: the key ring's calls, into `payload_keys`,
//! `secrets` and `rekey`.
//!
//! # Layout
//! - `payload_keys`: the keys the payloads are sealed with.
//! - `rekey`: re-sealing under the newest key.

pub(super) mod payload_keys;
pub(super) mod rekey;

use super::destinations::secrets;
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{KeyCount, Keys, Rekeyed, StoreError};
use crate::store::postgres::store::PgStore;

impl Keys for PgStore {
    fn payload_key(&self) -> &PayloadKey {
        &self.key
    }

    async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        payload_keys::record(self).await
    }

    async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        secrets::seal_clear(self).await
    }

    async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        rekey::counts(self).await
    }

    async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        rekey::batch(self, after, limit).await
    }

    async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        rekey::forget_unused(self).await
    }
}
