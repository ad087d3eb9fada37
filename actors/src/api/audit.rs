//! GET /v1/audit: the audit log of admin actions, newest first, a page at
//! a time, with filters. The console's page and `remit audit` read it
//! through the same query ([`AuditQuery`]) and show the same entries
//! ([`AuditEntryView`]).

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use remit::domain::{AuditEntry, AuditFilter, InvalidInput};
use remit::store::{Reports, MAX_AUDIT_PAGE};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::caller::Admin;
use super::error::ApiError;
use super::error::ErrorBody;
use super::replays::instant;
use super::state::ApiState;

/// A page when `limit` is not given.
pub const DEFAULT_AUDIT_PAGE: u32 = 50;

/// Which entries to list; every parameter given narrows the list.
#[derive(Debug, Default, Clone, Deserialize, Serialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this action, e.g. `destination.disable` (docs/api.md lists
    /// them all).
    pub action: Option<String>,
    /// Only actions on this kind of target: `token`, `destination`,
    /// `task`, `tenant`, `job`, `import` or `payload_key`.
    pub target_kind: Option<String>,
    /// Only actions on the target with this id.
    pub target_id: Option<String>,
    /// Only this actor: a token's id, a user of the command line, or a
    /// kind (`token`, `bootstrap`, `cli`, `system`).
    pub actor: Option<String>,
    /// Only entries at or after this instant, RFC 3339.
    #[param(format = DateTime)]
    pub since: Option<String>,
    /// Only entries before this instant, RFC 3339.
    #[param(format = DateTime)]
    pub until: Option<String>,
    /// The `next` of the page before: entries older than this one.
    #[param(format = Int64)]
    pub before: Option<String>,
    /// At most this many entries, 1 to 500 (50 when absent).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
}

impl AuditQuery {
    /// The filter, the cursor and the page's size, every parameter checked
    /// (an error names it). An empty parameter is no filter.
    pub fn filter(&self) -> Result<(AuditFilter, Option<i64>, u32), InvalidInput> {
        let filter = AuditFilter {
            action: given(&self.action)
                .map(AuditFilter::parse_action)
                .transpose()?,
            target_kind: given(&self.target_kind)
                .map(AuditFilter::parse_target_kind)
                .transpose()?,
            target_id: given(&self.target_id)
                .map(|t| AuditFilter::parse_text("target_id", t))
                .transpose()?,
            actor: given(&self.actor)
                .map(|a| AuditFilter::parse_text("actor", a))
                .transpose()?,
            since: given(&self.since)
                .map(|t| instant("since", t))
                .transpose()?,
            until: given(&self.until)
                .map(|t| instant("until", t))
                .transpose()?,
        };
        let before = given(&self.before)
            .map(|b| {
                b.parse::<i64>()
                    .ok()
                    .filter(|b| *b > 0)
                    .ok_or_else(|| InvalidInput::new("before", "must be an entry's id, from 1"))
            })
            .transpose()?;
        let limit = self.limit.unwrap_or(DEFAULT_AUDIT_PAGE);
        if !(1..=MAX_AUDIT_PAGE).contains(&limit) {
            return Err(InvalidInput::new(
                "limit",
                format!("must be from 1 to {MAX_AUDIT_PAGE}"),
            ));
        }
        Ok((filter, before, limit))
    }
}

/// A parameter's value, trimmed; `None` when absent or empty.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// Who acted.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ActorView {
    /// `token`, `bootstrap` (the configured `api.token`), `cli` (the
    /// `remit` command line) or `system`.
    pub kind: String,
    /// The token's id, or the operating-system user of the command line;
    /// `null` for `bootstrap` and `system`.
    #[schema(required = true)]
    pub id: Option<String>,
    /// The token's name, when it has one.
    #[schema(required = true)]
    pub name: Option<String>,
}

/// What an action was done to.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct TargetView {
    /// `token`, `destination`, `task`, `tenant`, `job`, `import` or
    /// `payload_key`.
    pub kind: String,
    pub id: String,
}

/// One admin action.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
#[schema(example = json!({
    "id": 42, "at": "2026-12-23T09:00:00Z",
    "actor": {"kind": "token", "id": "tok_3f2a9c1b7d4e8a60", "name": "on call"},
    "action": "destination.disable", "target": {"kind": "destination", "id": "crm"},
    "region": "us",
    "before": {"url": "https://hooks.example.com/remit", "region": "us", "enabled": true,
               "disabled_reason": null, "has_signing_secret": true,
               "disable_after_seconds": null, "disable_after_failures": null},
    "after": {"url": "https://hooks.example.com/remit", "region": "us", "enabled": false,
              "disabled_reason": "maintenance", "has_signing_secret": true,
              "disable_after_seconds": null, "disable_after_failures": null}
}))]
pub struct AuditEntryView {
    /// Grows with every entry written.
    pub id: i64,
    /// When the action's transaction ran.
    pub at: DateTime<Utc>,
    pub actor: ActorView,
    /// A stable dotted name, e.g. `token.create`, `destination.disable`.
    pub action: String,
    pub target: TargetView,
    /// The region the action applies in; `null` for what every region
    /// shares (tokens, an import, a rekey).
    #[schema(required = true)]
    pub region: Option<String>,
    /// The target's settings before; `null` when it did not exist or the
    /// action has none. Never a secret's value.
    #[schema(required = true, value_type = Option<Object>)]
    pub before: Option<serde_json::Value>,
    /// The target's settings after, or what the action did. Never a
    /// secret's value.
    #[schema(required = true, value_type = Option<Object>)]
    pub after: Option<serde_json::Value>,
}

impl From<&AuditEntry> for AuditEntryView {
    fn from(e: &AuditEntry) -> Self {
        Self {
            id: e.id,
            at: e.at,
            actor: ActorView {
                kind: e.actor.kind().to_owned(),
                id: e.actor.id().map(str::to_owned),
                name: e.actor.name().map(str::to_owned),
            },
            action: e.action.as_str().to_owned(),
            target: TargetView {
                kind: e.target.kind.as_str().to_owned(),
                id: e.target.id.clone(),
            },
            region: e.region.map(|r| r.as_str().to_owned()),
            before: e.before.clone(),
            after: e.after.clone(),
        }
    }
}

/// A page of entries, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AuditList {
    pub entries: Vec<AuditEntryView>,
    /// Pass as `before` for the next (older) page; `null` on the last.
    #[schema(required = true)]
    pub next: Option<i64>,
}

/// List the audit log
///
/// Every admin action (tokens made and revoked; destinations registered,
/// disabled, enabled, given a new secret, their retries brought forward;
/// tasks replayed, cancelled, rescheduled, erased; a tenant's erasure;
/// bulk jobs; imports; rekeys), newest first, a page at a time: pass
/// `next` as `before` for the next page. Each entry says who acted, what,
/// on what, where, and the settings before and after; never a secret.
#[utoipa::path(
    get,
    path = "/v1/audit",
    operation_id = "list_audit",
    tag = "audit",
    params(AuditQuery),
    responses(
        (status = 200, description = "A page of entries", body = AuditList),
        (status = 400, description = "A parameter this endpoint does not take, or not of its type", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn list(
    state: web::Data<ApiState>,
    _admin: Admin,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, ApiError> {
    // The console's form sends a field it leaves empty; through the API an
    // instant or a cursor given empty is one that does not parse.
    for (field, value) in [
        ("since", &query.since),
        ("until", &query.until),
        ("before", &query.before),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(ApiError::Invalid(InvalidInput::new(
                field,
                "must not be empty when given",
            )));
        }
    }
    let (filter, before, limit) = query.filter()?;
    let page = state.store.audit_entries(&filter, before, limit).await?;
    Ok(HttpResponse::Ok().json(AuditList {
        entries: page.entries.iter().map(AuditEntryView::from).collect(),
        next: page.next,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_parameter_is_checked_and_named() {
        let refused = |q: AuditQuery| q.filter().unwrap_err().field;
        let q = AuditQuery::default;
        assert_eq!(
            refused(AuditQuery {
                action: Some("nope".into()),
                ..q()
            }),
            "action"
        );
        assert_eq!(
            refused(AuditQuery {
                target_kind: Some("x".into()),
                ..q()
            }),
            "target_kind"
        );
        assert_eq!(
            refused(AuditQuery {
                since: Some("yesterday".into()),
                ..q()
            }),
            "since"
        );
        assert_eq!(
            refused(AuditQuery {
                until: Some("1".into()),
                ..q()
            }),
            "until"
        );
        assert_eq!(
            refused(AuditQuery {
                before: Some("-3".into()),
                ..q()
            }),
            "before"
        );
        assert_eq!(
            refused(AuditQuery {
                limit: Some(0),
                ..q()
            }),
            "limit"
        );
        assert_eq!(
            refused(AuditQuery {
                limit: Some(501),
                ..q()
            }),
            "limit"
        );
        let control = AuditQuery {
            actor: Some("a\u{0}b".into()),
            ..q()
        };
        assert_eq!(refused(control), "actor");
        let long = AuditQuery {
            target_id: Some("x".repeat(201)),
            ..q()
        };
        assert_eq!(refused(long), "target_id");
        let (filter, before, limit) = AuditQuery {
            action: Some("token.revoke".into()),
            actor: Some(" ".into()),
            before: Some("17".into()),
            ..q()
        }
        .filter()
        .unwrap();
        assert_eq!(filter.action, Some(remit::domain::AuditAction::TokenRevoke));
        assert_eq!((filter.actor, before, limit), (None, Some(17), 50));
    }
}
