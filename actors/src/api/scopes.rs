//! Which callers each /v1 route admits: the one place a route's scope is
//! said. The middleware (`auth`) checks every request against [`ROUTES`],
//! and the OpenAPI document declares each operation's scopes from it (one
//! security requirement per scope that may call it), so the two cannot
//! disagree. A /v1 route missing here is admitted to admin callers only,
//! and a unit test fails until it is added.

use remit::domain::Scope;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{OpenApi, PathItem, Ref, RefOr, ResponseBuilder};

/// What a route asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// The scopes that may call it.
    pub scopes: &'static [Scope],
    /// Whether a token limited to tenants may call it: only routes about
    /// one tenant's tasks, which check the tenant themselves. Every other
    /// route (destinations, tokens) concerns what all tenants share, so a
    /// tenant-limited token is refused there.
    pub per_tenant: bool,
}

impl Access {
    /// Admin tokens only.
    pub const ADMIN: Access = Access {
        scopes: &[Scope::Admin],
        per_tenant: false,
    };
    /// Reads of what all tenants share (destinations).
    pub const READ: Access = Access {
        scopes: &[Scope::Read, Scope::Admin],
        per_tenant: false,
    };
    /// Scheduling tasks, for the tenants the token may see.
    pub const SCHEDULE: Access = Access {
        scopes: &[Scope::Schedule, Scope::Admin],
        per_tenant: true,
    };
    /// Reading a task, if the token may see its tenant.
    pub const READ_TASKS: Access = Access {
        scopes: &[Scope::Read, Scope::Schedule, Scope::Admin],
        per_tenant: true,
    };
}

/// Every /v1 route: method, path as the OpenAPI document writes it, access.
pub const ROUTES: &[(&str, &str, Access)] = &[
    ("POST", "/v1/destinations", Access::ADMIN),
    ("GET", "/v1/destinations", Access::READ),
    ("GET", "/v1/destinations/{id}", Access::READ),
    ("PATCH", "/v1/destinations/{id}", Access::ADMIN),
    ("DELETE", "/v1/destinations/{id}", Access::ADMIN),
    ("GET", "/v1/destinations/{id}/stats", Access::READ),
    ("POST", "/v1/destinations/{id}/retry-now", Access::ADMIN),
    ("POST", "/v1/destinations/{id}/secrets", Access::ADMIN),
    ("GET", "/v1/destinations/{id}/secrets", Access::ADMIN),
    ("POST", "/v1/destinations/{id}/enable", Access::ADMIN),
    ("POST", "/v1/destinations/{id}/disable", Access::ADMIN),
    ("POST", "/v1/tasks", Access::SCHEDULE),
    ("GET", "/v1/tasks", Access::READ_TASKS),
    ("POST", "/v1/tasks/batch", Access::SCHEDULE),
    ("GET", "/v1/tasks/{id}", Access::READ_TASKS),
    ("POST", "/v1/tasks/{id}/replay", Access::ADMIN),
    ("POST", "/v1/tasks/{id}/cancel", Access::SCHEDULE),
    ("POST", "/v1/tasks/{id}/reschedule", Access::SCHEDULE),
    ("POST", "/v1/tasks/{id}/erase", Access::SCHEDULE),
    (
        "POST",
        "/v1/tenants/{tenant_id}/reminders/{reminder_id}/cancel",
        Access::SCHEDULE,
    ),
    (
        "POST",
        "/v1/tenants/{tenant_id}/reminders/{reminder_id}/reschedule",
        Access::SCHEDULE,
    ),
    (
        "POST",
        "/v1/tenants/{tenant_id}/reminders/{reminder_id}/erase",
        Access::SCHEDULE,
    ),
    (
        "PUT",
        "/v1/tenants/{tenant_id}/reminders/{reminder_id}",
        Access::SCHEDULE,
    ),
    ("POST", "/v1/tenants/{tenant_id}/erase", Access::ADMIN),
    ("POST", "/v1/tasks/replay", Access::ADMIN),
    ("POST", "/v1/tasks/cancel", Access::ADMIN),
    ("GET", "/v1/replays/{id}", Access::ADMIN),
    ("POST", "/v1/tokens", Access::ADMIN),
    ("GET", "/v1/tokens", Access::ADMIN),
    ("DELETE", "/v1/tokens/{id}", Access::ADMIN),
    ("GET", "/v1/audit", Access::ADMIN),
];

/// What a request to `method` on the resource `pattern` needs: `None`
/// when the resource does not take that method (it answers 405 itself); a
/// route not in [`ROUTES`] needs admin.
pub fn access(method: &str, pattern: &str) -> Option<Access> {
    let declared = ROUTES
        .iter()
        .find(|(m, p, _)| *m == method && *p == pattern)
        .map(|(_, _, access)| *access);
    match declared {
        Some(access) => Some(access),
        // Another method on a declared path: the resource answers 405.
        None if ROUTES.iter().any(|(_, p, _)| *p == pattern) => None,
        None => Some(Access::ADMIN),
    }
}

/// Sets each /v1 operation's `security` from [`ROUTES`] (one requirement
/// per scope, any of which admits the call) and documents the 400, 403 and
/// 503 every /v1 operation may answer.
pub fn declare(openapi: &mut OpenApi) {
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.starts_with("/v1/") && path != "/v1" {
            continue;
        }
        for (method, operation) in operations(item) {
            let Some((_, _, access)) = ROUTES
                .iter()
                .find(|(m, p, _)| m.eq_ignore_ascii_case(method) && p == path)
            else {
                continue;
            };
            operation.security = Some(
                access
                    .scopes
                    .iter()
                    .map(|scope| SecurityRequirement::new("bearer", [scope.as_str()]))
                    .collect(),
            );
            let refused = if access.per_tenant {
                "The token lacks the scope this operation needs"
            } else {
                "The token lacks the scope this operation needs, or is limited to tenants"
            };
            let responses = &mut operation.responses.responses;
            responses.insert("403".into(), error_response(refused));
            // Any path may be spelled in a way remit refuses (see
            // `canonical_path`); an operation with a body already has a 400.
            responses.entry("400".into()).or_insert_with(|| {
                error_response(
                    "The path is not in its one spelling: an encoded unreserved character, \
                     a dot segment or an empty segment",
                )
            });
            responses.insert(
                "503".into(),
                error_response("The token could not be checked: the database did not answer"),
            );
        }
    }
}

fn error_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                utoipa::openapi::ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build(),
    )
}

/// A path's operations with their methods.
fn operations(item: &mut PathItem) -> Vec<(&'static str, &mut utoipa::openapi::path::Operation)> {
    [
        ("GET", item.get.as_mut()),
        ("POST", item.post.as_mut()),
        ("PUT", item.put.as_mut()),
        ("PATCH", item.patch.as_mut()),
        ("DELETE", item.delete.as_mut()),
    ]
    .into_iter()
    .filter_map(|(method, op)| op.map(|op| (method, op)))
    .collect()
}

#[cfg(test)]
mod tests {
    use remit::domain::Scope;
    use utoipa::OpenApi;

    use super::{access, Access, ROUTES};
    use crate::api::openapi::ApiDoc;

    #[test]
    fn every_v1_operation_declares_its_scopes() {
        let document = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let paths = document["paths"].as_object().unwrap();
        let mut seen = Vec::new();
        for (path, item) in paths.iter().filter(|(p, _)| p.starts_with("/v1")) {
            for (method, operation) in item.as_object().unwrap() {
                let method = method.to_ascii_uppercase();
                assert!(
                    ROUTES.iter().any(|(m, p, _)| *m == method && p == path),
                    "{method} {path} has no scope: add it to api::scopes::ROUTES"
                );
                let security = operation["security"].as_array().unwrap();
                assert!(!security.is_empty(), "{method} {path}");
                for requirement in security {
                    let scopes = requirement["bearer"].as_array().unwrap();
                    assert_eq!(scopes.len(), 1, "{method} {path}: {requirement}");
                }
                seen.push((method, path.clone()));
            }
        }
        for (method, path, _) in ROUTES {
            assert!(
                seen.iter().any(|(m, p)| m == method && p == path),
                "{method} {path} is in ROUTES but not in the OpenAPI document"
            );
        }
    }

    #[test]
    fn the_document_says_who_may_call_what() {
        let document = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let scopes = |method: &str, path: &str| -> Vec<String> {
            document["paths"][path][method]["security"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["bearer"][0].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(scopes("post", "/v1/tasks"), ["schedule", "admin"]);
        assert_eq!(
            scopes("get", "/v1/tasks/{id}"),
            ["read", "schedule", "admin"]
        );
        assert_eq!(scopes("get", "/v1/destinations/{id}"), ["read", "admin"]);
        assert_eq!(scopes("post", "/v1/destinations"), ["admin"]);
        assert_eq!(scopes("post", "/v1/tasks/{id}/replay"), ["admin"]);
        assert_eq!(scopes("delete", "/v1/tokens/{id}"), ["admin"]);
        assert!(document["paths"]["/healthz"]["get"]["security"].is_null());
    }

    #[test]
    fn an_undeclared_route_needs_admin_and_another_method_is_left_to_the_router() {
        assert_eq!(access("POST", "/v1/tasks"), Some(Access::SCHEDULE));
        assert_eq!(access("PUT", "/v1/tasks"), None);
        assert_eq!(access("POST", "/v1/new/route"), Some(Access::ADMIN));
        assert!(Access::ADMIN.scopes == [Scope::Admin]);
    }
}
