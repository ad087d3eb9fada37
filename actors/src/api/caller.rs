//! Who is calling: the bootstrap token or a stored API token, as the
//! middleware (`auth`) found it. Handlers take it as an extractor to limit
//! what a tenant-limited token sees and schedules.

use std::future::{ready, Ready};

use actix_web::{FromRequest, HttpMessage, HttpRequest};
use remit::domain::{quoted, Actor, ApiToken, Scope, TenantId};

use super::error::ApiError;

#[derive(Debug, Clone)]
pub enum Caller {
    /// The configured `api.token`: admin, every tenant.
    Bootstrap,
    Token(ApiToken),
}

impl Caller {
    pub fn scope(&self) -> Scope {
        match self {
            Caller::Bootstrap => Scope::Admin,
            Caller::Token(token) => token.scope,
        }
    }

    /// Who it is in logs and records: the token's id, or `bootstrap`.
    pub fn name(&self) -> String {
        match self {
            Caller::Bootstrap => "bootstrap".to_owned(),
            Caller::Token(token) => token.id.to_string(),
        }
    }

    /// Who it is in the audit log: the token's id and name, or the
    /// bootstrap token.
    pub fn actor(&self) -> Actor {
        match self {
            Caller::Bootstrap => Actor::Bootstrap,
            Caller::Token(token) => Actor::Token {
                id: token.id.to_string(),
                name: token.name.clone(),
            },
        }
    }

    /// Whether it is limited to some tenants.
    pub fn tenant_limited(&self) -> bool {
        matches!(
            self,
            Caller::Token(ApiToken {
                tenants: Some(_),
                ..
            })
        )
    }

    /// Whether it may see `tenant`'s tasks. A task it may not see is
    /// answered exactly as a task that does not exist.
    pub fn sees_tenant(&self, tenant: &TenantId) -> bool {
        match self {
            Caller::Bootstrap => true,
            Caller::Token(token) => token.sees_tenant(tenant),
        }
    }

    /// Refuses scheduling for a tenant the token is not limited to.
    pub fn may_schedule_for(&self, tenant: &TenantId) -> Result<(), ApiError> {
        if self.sees_tenant(tenant) {
            return Ok(());
        }
        let allowed = match self {
            Caller::Token(ApiToken {
                tenants: Some(tenants),
                ..
            }) => tenants
                .iter()
                .map(|t| quoted(t.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
            _ => String::new(),
        };
        Err(ApiError::Forbidden {
            field: Some("tenant_id"),
            message: format!("this token schedules only for the tenants {allowed}"),
        })
    }
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    /// Set by the middleware in front of every /v1 route; a request that
    /// reached a handler without it is refused.
    fn from_request(request: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        ready(
            request
                .extensions()
                .get::<Caller>()
                .cloned()
                .ok_or(ApiError::Unauthorized),
        )
    }
}

/// A caller the admin routes admit: scope `admin`, every tenant. Admin
/// handlers take it as well as the per-route check in front of them, so an
/// admin operation stays refused even where that check were missing.
#[derive(Debug, Clone)]
pub struct Admin(pub Caller);

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let caller = match Caller::from_request(request, payload).into_inner() {
            Ok(caller) => caller,
            Err(e) => return ready(Err(e)),
        };
        ready(if caller.scope() != Scope::Admin {
            Err(ApiError::Forbidden {
                field: None,
                message: format!(
                    "this token's scope is {}; this operation needs admin",
                    caller.scope()
                ),
            })
        } else if caller.tenant_limited() {
            Err(ApiError::Forbidden {
                field: None,
                message: "this token is limited to tenants; this operation concerns every tenant"
                    .into(),
            })
        } else {
            Ok(Admin(caller))
        })
    }
}
