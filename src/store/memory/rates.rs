//! `Rates` on the model: token takes and learned quotas (`rate`).

use super::store::MemStore;
use crate::store::contract::{QuotaNote, RateGrant, RateRequest, Rates, StoreError};

impl Rates for MemStore {
    async fn take_tokens_many(
        &self,
        asks: &[RateRequest],
    ) -> Result<Vec<Option<RateGrant>>, StoreError> {
        asks.iter()
            .map(|ask| {
                match self.take_now(&ask.destination, ask.rate_per_second, ask.burst, ask.want) {
                    Ok(tokens) => Ok(Some(tokens)),
                    Err(StoreError::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .collect()
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        self.learn_now(notes);
        Ok(())
    }
}
