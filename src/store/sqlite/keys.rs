//! `Keys` on SQLite: the key ring's calls, into `payload_keys`,
//! `secrets` and `rekey`.

use super::store::SqliteStore;
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{KeyCount, Keys, Rekeyed, StoreError};

impl Keys for SqliteStore {
    fn payload_key(&self) -> &PayloadKey {
        self.key()
    }

    async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        SqliteStore::record_payload_key(self).await
    }

    async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        SqliteStore::seal_clear_secrets(self).await
    }

    async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        SqliteStore::sealed_counts(self).await
    }

    async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        SqliteStore::rekey_batch(self, after, limit).await
    }

    async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        SqliteStore::forget_unused_keys(self).await
    }
}
