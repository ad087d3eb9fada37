//! The API's OpenAPI 3 document, derived from the handlers' `#[utoipa::path]`
//! annotations and served at GET /openapi.json. docs/openapi.json is a
//! copy that a test keeps equal to it, so the contract can be read and
//! diffed without running the server.

use std::sync::LazyLock;

use actix_web::HttpResponse;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The document; every route `configure` registers is listed in `paths`.
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "remit",
        version = env!("CARGO_PKG_VERSION"),
        description = "Durable webhook delivery: register, change and delete destinations, schedule webhooks, \
            list, inspect, replay, cancel, move and erase them. Every path under /v1 needs `Authorization: Bearer <token>`, \
            checked before the body is read: the bootstrap token (`api.token`, admin) or an API \
            token. Each operation's `security` lists the token scopes that may call it, one \
            requirement per scope (any one suffices). Errors all have the `ErrorBody` shape and \
            never contain payload data.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        super::probes::healthz,
        super::probes::readyz,
        super::probes::metrics,
        document,
        super::destinations::create,
        super::listings::destinations,
        super::destinations::get,
        super::destination_settings::update,
        super::destination_settings::delete,
        super::destination_stats::get,
        super::secrets::rotate,
        super::secrets::list,
        super::destination_switch::disable,
        super::destination_switch::enable,
        super::destination_switch::retry_now,
        super::tasks::create,
        super::listings::tasks,
        super::batch::create,
        super::tasks::get,
        super::tasks::replay,
        super::task_changes::cancel,
        super::task_changes::reschedule,
        super::task_changes::erase,
        super::reminder_changes::cancel_reminder,
        super::reminder_changes::reschedule_reminder,
        super::reminder_changes::erase_reminder,
        super::reminder_put::put,
        super::reminder_changes::erase_tenant,
        super::replays::create,
        super::replays::cancel,
        super::replays::get,
        super::tokens::create,
        super::tokens::list,
        super::tokens::revoke,
        super::audit::list,
    ),
    modifiers(&BearerToken),
    tags(
        (name = "destinations", description = "Receivers of webhooks"),
        (name = "tasks", description = "Logical webhooks: schedule, list, inspect, replay, cancel, reschedule, erase"),
        (name = "tokens", description = "API tokens and their scopes (admin)"),
        (name = "audit", description = "Who did which admin action, when, and what it changed (admin)"),
        (name = "probes", description = "Liveness, readiness and metrics; no token needed"),
        (name = "meta", description = "This document; no token needed"),
    ),
)]
pub struct ApiDoc;

/// The scheme the /v1 operations name in their `security`.
struct BearerToken;

impl Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "The bootstrap token (`api.token`, scope `admin`) or an API token (`remit_…`) \
                 with one of the scopes the operation lists: `read`, `schedule` or `admin`.",
            ))
            .build();
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", SecurityScheme::Http(scheme));
        super::scopes::declare(openapi);
    }
}

// Built once: the document cannot change while the process runs.
static DOCUMENT: LazyLock<utoipa::openapi::OpenApi> = LazyLock::new(ApiDoc::openapi);

/// This API's OpenAPI document
///
/// The same document as docs/openapi.json in the source tree.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    tag = "meta",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = Object)),
)]
pub async fn document() -> HttpResponse {
    HttpResponse::Ok().json(&*DOCUMENT)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use utoipa::OpenApi;

    use super::ApiDoc;

    /// Set to 1 to write docs/openapi.json instead of checking it.
    const WRITE: &str = "REMIT_WRITE_OPENAPI";

    #[test]
    fn docs_openapi_json_is_the_generated_document() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json");
        let generated = ApiDoc::openapi().to_pretty_json().unwrap() + "\n";
        if std::env::var(WRITE).is_ok_and(|v| v == "1") {
            std::fs::write(&path, &generated).unwrap();
            return;
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        if checked_in != generated {
            let line = checked_in
                .lines()
                .zip(generated.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| checked_in.lines().count().min(generated.lines().count()));
            panic!(
                "docs/openapi.json is not the document the API's annotations generate \
                 (first difference at line {}:\n  checked in: {:?}\n  generated:  {:?}).\n\
                 Regenerate it with\n  {WRITE}=1 cargo test -p remit-actors --lib openapi\n\
                 and review the diff.",
                line + 1,
                checked_in.lines().nth(line).unwrap_or("<end of file>"),
                generated.lines().nth(line).unwrap_or("<end of file>"),
            );
        }
    }
}
