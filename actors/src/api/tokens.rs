//! /v1/tokens: make, list and revoke API tokens (admin only; see
//! `scopes`). A token's secret is in the answer that makes it and nowhere
//! else: the store keeps its hash.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use remit::domain::{quoted, ApiToken, InvalidInput, TokenGrant, TokenId};
use remit::store::ApiTokens;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::read_object;
use super::caller::Admin;
use super::error::ApiError;
use super::error::ErrorBody;
use super::state::ApiState;

/// A token to make.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "scope": "schedule", "tenants": ["clinic-1"], "expires_at": "2027-01-01T00:00:00Z",
    "name": "clinic-1 scheduler"
}))]
pub struct CreateToken {
    /// `read` (read tasks and destinations), `schedule` (schedule tasks and
    /// read them) or `admin` (everything).
    #[schema(pattern = "^(read|schedule|admin)$")]
    scope: String,
    /// Limits the token to these tenants' tasks (not for `admin`); absent
    /// or empty for every tenant.
    #[serde(default)]
    tenants: Option<Vec<String>>,
    /// When it stops working (RFC 3339, in the future); absent for never.
    #[serde(default)]
    #[schema(format = DateTime)]
    expires_at: Option<String>,
    /// A label for people; at most 200 bytes, no control characters.
    #[serde(default)]
    #[schema(max_length = 200)]
    name: Option<String>,
}

impl CreateToken {
    /// The grant this asks for, checked by [`TokenGrant::check`].
    pub fn grant(self) -> Result<TokenGrant, InvalidInput> {
        let expires_at = self
            .expires_at
            .map(|at| {
                DateTime::parse_from_rfc3339(&at)
                    .map(|at| at.with_timezone(&Utc))
                    .map_err(|e| {
                        InvalidInput::new(
                            "expires_at",
                            format!(
                                "must be RFC 3339 with an offset, e.g. 2027-01-01T00:00:00Z ({e})"
                            ),
                        )
                    })
            })
            .transpose()?;
        Ok(TokenGrant {
            scope: self.scope,
            tenants: self.tenants.unwrap_or_default(),
            expires_at,
            name: self.name,
        })
    }
}

/// A stored token: never its secret.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "tok_5dd5927d7acd90f1", "name": "clinic-1 scheduler", "scope": "schedule",
    "tenants": ["clinic-1"], "created_at": "2026-12-13T09:00:00Z",
    "expires_at": "2027-01-01T00:00:00Z", "revoked_at": null
}))]
pub struct TokenView {
    /// The public id, `tok_` and 16 hex digits: no secret.
    pub id: String,
    #[schema(required = true)]
    pub name: Option<String>,
    pub scope: String,
    /// The only tenants it may schedule and read for; `null` for every
    /// tenant.
    #[schema(required = true)]
    pub tenants: Option<Vec<String>>,
    pub created_at: DateTime<Utc>,
    #[schema(required = true)]
    pub expires_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub revoked_at: Option<DateTime<Utc>>,
}

impl From<&ApiToken> for TokenView {
    fn from(t: &ApiToken) -> Self {
        Self {
            id: t.id.to_string(),
            name: t.name.clone(),
            scope: t.scope.to_string(),
            tenants: t
                .tenants
                .as_ref()
                .map(|ts| ts.iter().map(|t| t.as_str().to_owned()).collect()),
            created_at: t.created_at,
            expires_at: t.expires_at,
            revoked_at: t.revoked_at,
        }
    }
}

/// A token just made, with its secret: shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedToken {
    /// The bearer token, `remit_` and 43 characters. Store it now: remit
    /// keeps only its hash and cannot show it again.
    pub token: String,
    #[serde(flatten)]
    pub stored: TokenView,
}

/// Make an API token
///
/// The answer holds the token itself, which is never shown again.
#[utoipa::path(
    post,
    path = "/v1/tokens",
    operation_id = "create_token",
    tag = "tokens",
    request_body = CreateToken,
    responses(
        (status = 201, description = "Made: the token, once, and what is stored", body = CreatedToken),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing, unknown, revoked or expired bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 413, description = "The body is over its limit", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    let grant = read_object::<CreateToken>(body.get())?.grant()?;
    let (new, token) = grant.check(Utc::now())?;
    let stored = state.acting(&caller).add_api_token(new).await?;
    Ok(HttpResponse::Created().json(CreatedToken {
        token,
        stored: TokenView::from(&stored),
    }))
}

/// List API tokens
///
/// Every token, oldest first, revoked and expired ones included; never a
/// secret.
#[utoipa::path(
    get,
    path = "/v1/tokens",
    operation_id = "list_tokens",
    tag = "tokens",
    responses(
        (status = 200, description = "Every token, oldest first", body = Vec<TokenView>),
        (status = 401, description = "Missing, unknown, revoked or expired bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn list(state: web::Data<ApiState>, _admin: Admin) -> Result<HttpResponse, ApiError> {
    let tokens = state.store.api_tokens().await?;
    Ok(HttpResponse::Ok().json(tokens.iter().map(TokenView::from).collect::<Vec<_>>()))
}

/// Revoke an API token
///
/// Refused from the next request on, in every process. Revoking again
/// answers the same token, revoked when it first was.
#[utoipa::path(
    delete,
    path = "/v1/tokens/{id}",
    operation_id = "revoke_token",
    tag = "tokens",
    params(("id" = String, Path, description = "The token's public id", pattern = "^tok_[0-9a-f]{16}$")),
    responses(
        (status = 200, description = "The token, revoked", body = TokenView),
        (status = 401, description = "Missing, unknown, revoked or expired bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No token has this id", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn revoke(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let missing = || ApiError::NotFound(format!("no token with id {}", quoted(&id)));
    let token_id = TokenId::new(&id).map_err(|_| missing())?;
    let revoked = state
        .acting(&caller)
        .revoke_api_token(&token_id)
        .await?
        .ok_or_else(missing)?;
    Ok(HttpResponse::Ok().json(TokenView::from(&revoked)))
}
