//! `Rates` on PostgreSQL: token takes (`rate`) and the quotas receivers
//! announce (`quota`).
//!
//! # Layout
//! - `rate`: token takes from each destination's bucket.
//! - `quota`: what receivers announced of their quotas.

pub(super) mod quota;
pub(super) mod rate;

use crate::store::contract::{QuotaNote, RateGrant, RateRequest, Rates, StoreError};
use crate::store::postgres::store::PgStore;

impl Rates for PgStore {
    async fn take_tokens_many(
        &self,
        asks: &[RateRequest],
    ) -> Result<Vec<Option<RateGrant>>, StoreError> {
        rate::take_tokens_many(self, asks).await
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        quota::learn_quotas(self, notes).await
    }
}
