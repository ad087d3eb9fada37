//! Signing secrets in the model, by the rules of `domain::Rotation`.

use chrono::{DateTime, Utc};

use super::state::{DestinationRecord, State};
use crate::domain::{Rotation, SigningSecret, TargetSecret};

impl State {
    /// A fresh secret id; ids come from a counter, so a seeded run is
    /// reproducible.
    pub(super) fn secret_id(&mut self) -> String {
        self.next_secret_id += 1;
        uuid::Uuid::from_u128(self.next_secret_id | (1 << 126)).to_string()
    }
}

impl DestinationRecord {
    /// Adds a secret without an end.
    pub(super) fn add_secret(
        &mut self,
        id: String,
        secret: String,
        now: DateTime<Utc>,
    ) -> SigningSecret {
        let stored = SigningSecret {
            id,
            created_at: now,
            expires_at: None,
        };
        self.secrets.push((stored.clone(), secret));
        self.destination.has_signing_secret = true;
        stored
    }

    /// Ends the valid secrets at the rotation's end (a sooner end is kept)
    /// and adds the rotation's secret.
    pub(super) fn rotate(
        &mut self,
        id: String,
        rotation: Rotation,
        now: DateTime<Utc>,
    ) -> SigningSecret {
        for (stored, _) in &mut self.secrets {
            stored.expires_at = rotation.new_end(stored.expires_at, now);
        }
        self.add_secret(id, rotation.secret, now)
    }

    /// The secrets valid at `now`, newest first.
    pub(super) fn valid_secrets(&self, now: DateTime<Utc>) -> Vec<TargetSecret> {
        self.secrets
            .iter()
            .rev()
            .filter(|(stored, _)| stored.valid_at(now))
            .map(|(stored, secret)| TargetSecret {
                secret: secret.clone(),
                expires_at: stored.expires_at,
            })
            .collect()
    }

    pub(super) fn valid_values(&self, now: DateTime<Utc>) -> Vec<String> {
        self.valid_secrets(now)
            .into_iter()
            .map(|s| s.secret)
            .collect()
    }
}
