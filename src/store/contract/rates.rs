//! `Rates`: each destination's shared rate across the region's processes:
//! the token bucket every send takes from, and the quotas receivers
//! announce.

use std::future::Future;

use super::calls::QuotaNote;
use super::calls::RateGrant;
use super::calls::RateRequest;
use super::error::StoreError;
use crate::domain::DestinationId;

pub trait Rates: Sync {
    /// Takes up to `want` tokens from the destination's shared bucket; a
    /// destination that does not exist is `NotFound`. A batch of one.
    fn take_tokens(
        &self,
        id: &DestinationId,
        rate_per_second: f64,
        burst: u32,
        want: u32,
    ) -> impl Future<Output = Result<RateGrant, StoreError>> + Send {
        let ask = RateRequest {
            destination: id.clone(),
            rate_per_second,
            burst,
            want,
        };
        async move {
            match self.take_tokens_many(std::slice::from_ref(&ask)).await?[..] {
                [Some(tokens)] => Ok(tokens),
                _ => Err(StoreError::NotFound {
                    what: "destination",
                    id: ask.destination.to_string(),
                }),
            }
        }
    }

    /// Takes from many buckets at once, up to each ask's `want` from its
    /// destination's shared bucket: the answers come back in order, `None`
    /// for a destination that does not exist.
    fn take_tokens_many(
        &self,
        asks: &[RateRequest],
    ) -> impl Future<Output = Result<Vec<Option<RateGrant>>, StoreError>> + Send;

    /// Records what receivers announced of their quotas: each destination's
    /// remaining requests until its reset (the store's now plus the note's
    /// `resets_in`), by which token takes pace it until then, across every
    /// process of the region. The last note for a destination in a batch
    /// wins; a destination that does not exist is skipped.
    fn learn_quotas(
        &self,
        notes: &[QuotaNote],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}
