//! The model's payload key ring, as the databases keep theirs: the
//! fingerprints recorded as ones its payloads are sealed with, the check
//! at start, and `remit rekey` (a batch re-sealed under the newest key,
//! the counts under each key, forgetting a key nothing is sealed under).
//! A handle's own ring is its `key`; `with_key` makes another process's.

use super::store::MemStore;
use crate::domain::DestinationId;
use crate::payload_crypto::{hex, PayloadKey, SealedPayload};
use crate::store::contract::{
    may_record, HeaderRecord, KeyCount, Keys, Rekeyed, StoreError, StoredValue,
};
use crate::store::rules::audit_entries;
use crate::store::rules::rekey::merge_counts;

impl super::state::State {
    /// Records `fingerprint` as one this store's payloads are sealed with,
    /// once, as an import of something sealed under it does.
    pub(super) fn record_key(&mut self, fingerprint: &[u8]) {
        if !self.payload_keys.iter().any(|f| f == fingerprint) {
            self.payload_keys.push(fingerprint.to_vec());
        }
    }
}

/// Counts by fingerprint, as a `GROUP BY` gives them.
fn counted<'a>(fingerprints: impl Iterator<Item = &'a [u8]>) -> Vec<(Vec<u8>, i64)> {
    let mut by_key: Vec<(Vec<u8>, i64)> = Vec::new();
    for f in fingerprints {
        match by_key.iter_mut().find(|(k, _)| k == f) {
            Some((_, n)) => *n += 1,
            None => by_key.push((f.to_vec(), 1)),
        }
    }
    by_key
}

impl Keys for MemStore {
    fn payload_key(&self) -> &PayloadKey {
        &self.key
    }

    async fn record_payload_key(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        let mut state = self.state.lock();
        let newest = self.key.fingerprint().to_vec();
        if may_record(&self.key, &state.payload_keys) {
            state.record_key(&newest);
        }
        Ok(state.payload_keys.clone())
    }

    async fn seal_clear_secrets(&self) -> Result<u64, StoreError> {
        let mut state = self.state.lock();
        let mut sealed = 0;
        for record in state.destinations.values_mut() {
            let destination = record.destination.id.as_str();
            for secret in &mut record.secrets {
                if let StoredValue::Clear(value) = &secret.value {
                    let value = self.key.seal_secret(&secret.id, destination, value);
                    secret.value = StoredValue::Sealed(value);
                    sealed += 1;
                }
            }
        }
        Ok(sealed)
    }

    async fn sealed_counts(&self) -> Result<Vec<KeyCount>, StoreError> {
        let state = self.state.lock();
        let payloads = counted(
            state
                .payloads
                .values()
                .map(|(_, sealed)| sealed.key_fingerprint.as_slice()),
        );
        // Secret header values count as secrets, as the databases count them.
        let secrets = counted(state.destinations.values().flat_map(|d| {
            let signing = d.secrets.iter().filter_map(|s| match &s.value {
                StoredValue::Sealed(sealed) => Some(sealed.key_fingerprint.as_slice()),
                StoredValue::Clear(_) => None,
            });
            signing.chain(d.headers.iter().filter_map(HeaderRecord::key_fingerprint))
        }));
        Ok(merge_counts(payloads, secrets))
    }

    /// Every row of the batch is opened before any is rewritten, so a row
    /// the ring cannot open leaves the batch unwritten, as the databases'
    /// rolled-back transaction does.
    async fn rekey_batch(
        &self,
        after: Option<uuid::Uuid>,
        limit: u32,
    ) -> Result<Rekeyed, StoreError> {
        let key = &self.key;
        let newest = key.fingerprint();
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let mut state = self.state.lock();

        let mut refs: Vec<uuid::Uuid> = state
            .payloads
            .iter()
            .filter(|(r, (_, sealed))| {
                after.is_none_or(|a| **r > a) && sealed.key_fingerprint != newest
            })
            .map(|(r, _)| *r)
            .collect();
        refs.sort_unstable();
        refs.truncate(limit);
        let mut payloads: Vec<(uuid::Uuid, SealedPayload)> = Vec::with_capacity(refs.len());
        for r in &refs {
            let (content_type, sealed) = &state.payloads[r];
            payloads.push((*r, key.reseal(*r, content_type, sealed)?));
        }

        // Secrets by id, as the databases order them.
        let mut stale: Vec<(String, String)> = state
            .destinations
            .values()
            .flat_map(|d| {
                d.secrets
                    .iter()
                    .filter(|s| {
                        matches!(&s.value, StoredValue::Sealed(sealed)
                            if sealed.key_fingerprint != newest)
                    })
                    .map(|s| (s.id.clone(), d.destination.id.as_str().to_owned()))
            })
            .collect();
        stale.sort_unstable();
        stale.truncate(limit);
        let mut secrets = Vec::with_capacity(stale.len());
        for (id, destination) in &stale {
            let record = state
                .destinations
                .values()
                .flat_map(|d| &d.secrets)
                .find(|s| s.id == *id)
                .expect("a stale secret is there");
            let value = record.value.open(key, id, destination)?;
            secrets.push((id.clone(), key.seal_secret(id, destination, &value)));
        }

        // Secret headers by (destination, name), as the databases order
        // them, up to `limit` more.
        let mut headers: Vec<(DestinationId, usize, HeaderRecord)> = Vec::new();
        for d in state.destinations.values() {
            for (i, h) in d.headers.iter().enumerate() {
                if h.key_fingerprint().is_some_and(|f| f != newest) {
                    headers.push((d.destination.id.clone(), i, h.clone()));
                }
            }
        }
        headers.sort_by(|a, b| (&a.0, &a.2.name).cmp(&(&b.0, &b.2.name)));
        headers.truncate(limit);
        let headers = headers
            .into_iter()
            .map(|(d, i, h)| Ok((h.resealed(key, d.as_str())?, d, i)))
            .collect::<Result<Vec<_>, StoreError>>()?;

        let done = Rekeyed {
            payloads: payloads.len() as u64,
            secrets: (secrets.len() + headers.len()) as u64,
            next: refs.last().copied(),
        };
        for (r, sealed) in payloads {
            if let Some(row) = state.payloads.get_mut(&r) {
                row.1 = sealed;
            }
        }
        for (id, sealed) in secrets {
            for record in state.destinations.values_mut() {
                for secret in record.secrets.iter_mut().filter(|s| s.id == id) {
                    secret.value = StoredValue::Sealed(sealed.clone());
                }
            }
        }
        for (resealed, d, i) in headers {
            if let Some(record) = state.destinations.get_mut(&d) {
                let mut rows = record.headers.clone();
                rows[i] = resealed;
                record.set_headers(rows);
            }
        }
        Ok(done)
    }

    async fn forget_unused_keys(&self) -> Result<Vec<Vec<u8>>, StoreError> {
        let mut state = self.state.lock();
        let newest = self.key.fingerprint();
        let used = |f: &[u8]| {
            state.payloads.values().any(|(_, s)| s.key_fingerprint == f)
                || state.destinations.values().any(|d| {
                    d.secrets.iter().any(
                        |s| matches!(&s.value, StoredValue::Sealed(sealed) if sealed.key_fingerprint == f),
                    ) || d.headers.iter().any(|h| h.key_fingerprint() == Some(f))
                })
        };
        let (forgotten, kept): (Vec<Vec<u8>>, Vec<Vec<u8>>) = state
            .payload_keys
            .iter()
            .cloned()
            .partition(|f| f != newest && !used(f));
        state.payload_keys = kept;
        let names: Vec<String> = forgotten.iter().map(|f| hex(f)).collect();
        let entry = audit_entries::keys_forgotten(&hex(newest), &names);
        self.audit_in(&mut state, entry);
        Ok(forgotten)
    }
}
