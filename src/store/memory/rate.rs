//! The shared token bucket over the model, by `bucket::take_tokens`, and
//! the quotas receivers announce, by `quota::learned`.

use super::store::MemStore;
use crate::domain::DestinationId;
use crate::store::contract::{QuotaNote, RateGrant, StoreError};
use crate::store::rules::bucket::{self, Bucket};
use crate::store::rules::quota;

impl MemStore {
    pub(super) fn take_now(
        &self,
        id: &DestinationId,
        rate_per_second: f64,
        burst: u32,
        want: u32,
    ) -> Result<RateGrant, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let record = state
            .destinations
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
        let bucket = Bucket {
            tokens: record.rate_tokens,
            refilled_at: record.rate_refilled_at,
            quota: record.quota.map(|q| q.pace),
            granted: record.rate_granted,
        };
        let (tokens, after) = bucket::take_tokens(bucket, rate_per_second, burst, want, now);
        record.rate_tokens = after.tokens;
        record.rate_refilled_at = after.refilled_at;
        record.rate_granted = after.granted;
        if let (Some(row), Some(pace)) = (record.quota.as_mut(), after.quota) {
            row.pace = pace;
        }
        Ok(tokens)
    }

    pub(super) fn learn_now(&self, notes: &[QuotaNote]) {
        let now = self.now();
        let mut state = self.state.lock();
        for note in quota::latest(notes) {
            if let Some(record) = state.destinations.get_mut(&note.destination) {
                let stored = record.quota.map(|q| (q.token, q.learned_at));
                if quota::supersedes(note, stored) {
                    let token = record.quota.and_then(|q| q.token);
                    record.quota = Some(quota::learned(note, record.rate_granted, token, now));
                }
            }
        }
    }
}
