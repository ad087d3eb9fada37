//! API tokens in the model: the table as a list, in insertion order.

use chrono::SubsecRound;

use super::store::MemStore;
use crate::domain::{ApiToken, NewApiToken, TokenHash, TokenId};
use crate::store::contract::{ApiTokens, StoreError};
use crate::store::rules::audit_entries;
use crate::store::rules::token_rows::token_conflict;

impl MemStore {
    pub(super) fn add_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        if state
            .api_tokens
            .iter()
            .any(|(hash, token)| *hash == new.hash || token.id == new.id)
        {
            return Err(token_conflict());
        }
        // Instants as PostgreSQL keeps them: to the microsecond.
        let token = ApiToken {
            id: new.id,
            name: new.name,
            scope: new.scope,
            tenants: new.tenants,
            created_at: now.trunc_subsecs(6),
            expires_at: new.expires_at.map(|at| at.trunc_subsecs(6)),
            revoked_at: None,
        };
        state.api_tokens.push((new.hash, token.clone()));
        self.audit_in(&mut state, audit_entries::token_created(&token));
        Ok(token)
    }

    pub(super) fn token_by_hash(&self, hash: &TokenHash) -> Option<ApiToken> {
        let state = self.state.lock();
        let found = state.api_tokens.iter().find(|(h, _)| h == hash);
        found.map(|(_, token)| token.clone())
    }

    pub(super) fn tokens(&self) -> Vec<ApiToken> {
        let mut tokens: Vec<ApiToken> = self
            .state
            .lock()
            .api_tokens
            .iter()
            .map(|(_, token)| token.clone())
            .collect();
        tokens.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        tokens
    }

    pub(super) fn revoke_token(&self, id: &TokenId) -> Option<ApiToken> {
        let now = self.now().trunc_subsecs(6);
        let mut state = self.state.lock();
        let (_, token) = state.api_tokens.iter_mut().find(|(_, t)| &t.id == id)?;
        let before = token.clone();
        token.revoked_at.get_or_insert(now);
        let after = token.clone();
        self.audit_in(&mut state, audit_entries::token_revoked(&before, &after));
        Some(after)
    }
}

impl ApiTokens for MemStore {
    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        self.add_token(new)
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        Ok(self.token_by_hash(hash))
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        Ok(self.tokens())
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        Ok(self.revoke_token(id))
    }
}
