//! `ApiTokens`: the API's bearer tokens, stored by their hash.

use std::future::Future;

use super::error::StoreError;
use crate::domain::{ApiToken, NewApiToken, TokenHash, TokenId};

pub trait ApiTokens: Sync {
    /// Stores an API token (its hash, never the token), made at the
    /// store's now. An id or hash already stored is a `Conflict`.
    fn add_api_token(
        &self,
        new: NewApiToken,
    ) -> impl Future<Output = Result<ApiToken, StoreError>> + Send;

    /// The token whose SHA-256 is `hash`, revoked and expired ones
    /// included (the caller decides at its now): one indexed read.
    fn api_token_by_hash(
        &self,
        hash: &TokenHash,
    ) -> impl Future<Output = Result<Option<ApiToken>, StoreError>> + Send;

    /// Every API token, oldest first (ties by id).
    fn api_tokens(&self) -> impl Future<Output = Result<Vec<ApiToken>, StoreError>> + Send;

    /// Revokes the token from the store's now; a token revoked before
    /// keeps its first revocation. `None` for an id no token has.
    fn revoke_api_token(
        &self,
        id: &TokenId,
    ) -> impl Future<Output = Result<Option<ApiToken>, StoreError>> + Send;
}
