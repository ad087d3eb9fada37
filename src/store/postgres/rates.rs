//! `Rates` on PostgreSQL: token takes (`rate`) and the quotas receivers
//! announce (`quota`).

use super::{quota, rate, PgStore};
use crate::store::{QuotaNote, Rates, StoreError, TokenRequest, Tokens};

impl Rates for PgStore {
    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        rate::take_tokens_many(self, asks).await
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        quota::learn_quotas(self, notes).await
    }
}
