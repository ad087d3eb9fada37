//! An API token's columns as every store reads them back, with the error
//! for a column that holds what no build wrote.

use chrono::{DateTime, Utc};

use crate::domain::{ApiToken, TenantId, TokenId};
use crate::store::contract::StoreError;

/// A stored token's columns, before they are checked.
pub(in crate::store) struct TokenColumns {
    pub(in crate::store) id: String,
    pub(in crate::store) name: Option<String>,
    pub(in crate::store) scope: String,
    pub(in crate::store) tenants: Option<Vec<String>>,
    pub(in crate::store) created_at: DateTime<Utc>,
    pub(in crate::store) expires_at: Option<DateTime<Utc>>,
    pub(in crate::store) revoked_at: Option<DateTime<Utc>>,
}

impl TokenColumns {
    pub(in crate::store) fn into_token(self) -> Result<ApiToken, StoreError> {
        let corrupt = |column: &'static str| {
            move |e: crate::domain::InvalidInput| StoreError::Corrupt {
                column,
                reason: e.reason,
            }
        };
        let tenants = match self.tenants {
            None => None,
            Some(tenants) => Some(
                tenants
                    .iter()
                    .map(|t| TenantId::new(t).map_err(corrupt("api_tokens.tenants")))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(ApiToken {
            id: TokenId::new(&self.id).map_err(corrupt("api_tokens.id"))?,
            name: self.name,
            scope: self.scope.parse().map_err(corrupt("api_tokens.scope"))?,
            tenants,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
        })
    }
}

/// The conflict of a token whose id or hash is already stored (two
/// random values colliding: in practice, a token stored twice).
pub(in crate::store) fn token_conflict() -> StoreError {
    StoreError::Conflict {
        what: "api token".into(),
        differs: "id or secret hash".into(),
    }
}
