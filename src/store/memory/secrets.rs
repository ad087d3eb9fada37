//! Signing secrets in the model, by the rules of `domain::Rotation`, kept
//! as the databases keep them: sealed under the store's key, opened for a
//! send, so a store holding another key is refused as theirs are.

use chrono::{DateTime, Utc};

use super::state::{DestinationRecord, State};
use crate::domain::{Rotation, SigningSecret, TargetSecret};
use crate::payload_crypto::PayloadKey;
use crate::store::contract::{SecretRecord, StoreError, StoredValue};

impl State {
    /// A fresh secret id; ids come from a counter, so a seeded run is
    /// reproducible, past any an import brought.
    pub(super) fn secret_id(&mut self) -> String {
        loop {
            self.next_secret_id += 1;
            let id = uuid::Uuid::from_u128(self.next_secret_id | (1 << 126)).to_string();
            let taken = self
                .destinations
                .values()
                .any(|d| d.secrets.iter().any(|s| s.id == id));
            if !taken {
                return id;
            }
        }
    }
}

impl DestinationRecord {
    /// Adds a secret, sealed with `key`, without an end.
    pub(super) fn add_secret(
        &mut self,
        key: &PayloadKey,
        id: String,
        secret: &str,
        now: DateTime<Utc>,
    ) -> SigningSecret {
        let sealed = key.seal_secret(&id, self.destination.id.as_str(), secret);
        self.secrets.push(SecretRecord {
            id: id.clone(),
            created_at: now,
            expires_at: None,
            value: StoredValue::Sealed(sealed),
        });
        self.destination.has_signing_secret = true;
        SigningSecret {
            id,
            created_at: now,
            expires_at: None,
        }
    }

    /// Ends the valid secrets at the rotation's end (a sooner end is kept)
    /// and adds the rotation's secret.
    pub(super) fn rotate(
        &mut self,
        key: &PayloadKey,
        id: String,
        rotation: Rotation,
        now: DateTime<Utc>,
    ) -> SigningSecret {
        for stored in &mut self.secrets {
            stored.expires_at = rotation.new_end(stored.expires_at, now);
        }
        self.add_secret(key, id, &rotation.secret, now)
    }

    /// Every secret, oldest first, without values.
    pub(super) fn listed_secrets(&self) -> Vec<SigningSecret> {
        self.secrets
            .iter()
            .map(|s| SigningSecret {
                id: s.id.clone(),
                created_at: s.created_at,
                expires_at: s.expires_at,
            })
            .collect()
    }

    /// The secrets valid at `now`, newest first, opened with `key`.
    pub(super) fn valid_secrets(
        &self,
        key: &PayloadKey,
        now: DateTime<Utc>,
    ) -> Result<Vec<TargetSecret>, StoreError> {
        self.secrets
            .iter()
            .rev()
            .filter(|stored| crate::domain::valid_at(stored.expires_at, now))
            .map(|stored| {
                Ok(TargetSecret {
                    secret: stored
                        .value
                        .open(key, &stored.id, self.destination.id.as_str())?,
                    expires_at: stored.expires_at,
                })
            })
            .collect()
    }

    pub(super) fn valid_values(
        &self,
        key: &PayloadKey,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        Ok(self
            .valid_secrets(key, now)?
            .into_iter()
            .map(|s| s.secret)
            .collect())
    }
}
