//! `Rates` on SQLite: token takes and learned quotas (`rate`).

use super::rate;
use super::store::SqliteStore;
use crate::store::contract::{QuotaNote, RateGrant, RateRequest, Rates, StoreError};

impl Rates for SqliteStore {
    async fn take_tokens_many(
        &self,
        asks: &[RateRequest],
    ) -> Result<Vec<Option<RateGrant>>, StoreError> {
        let asks = asks.to_vec();
        self.run(true, move |conn, ctx| {
            rate::take_tokens_many(conn, &asks, ctx.now)
        })
        .await
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        let notes = notes.to_vec();
        self.run(true, move |conn, ctx| {
            rate::learn_quotas(conn, &notes, ctx.now)
        })
        .await
    }
}
