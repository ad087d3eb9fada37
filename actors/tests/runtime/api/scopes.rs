//! Every /v1 operation the OpenAPI document lists, called by every kind of
//! caller, on both stores: 401 without a usable token (none, unknown,
//! revoked, expired), 403 for a known token without the operation's scope
//! (or limited to tenants on a route that is not about one tenant's
//! tasks), 404 for another tenant's task, and through for the rest.

use chrono::{Duration, Utc};
use remit::domain::{ApiToken, NewApiToken, Region, TokenGrant};
use remit::store::ApiTokens;
use serde_json::{json, Value};

use super::client::Api;
use crate::support::{self, Backend, Receiver, TestDb, API_TOKEN};

pub(super) fn checked_in() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Who calls.
#[derive(Debug, Clone)]
struct Caller {
    name: &'static str,
    token: Option<String>,
    /// The scope the document must list for the call to go through;
    /// `None` for a caller that is refused 401 everywhere.
    scope: Option<&'static str>,
    /// Limited to tenants, and sees the fixture task's tenant.
    limited: Option<bool>,
}

pub(super) async fn stored(db: &TestDb, grant: TokenGrant) -> (ApiToken, String) {
    let (new, token) = grant.check(Utc::now()).unwrap();
    (db.store.add_api_token(new).await.unwrap(), token)
}

pub(super) fn grant(scope: &str, tenants: &[&str]) -> TokenGrant {
    TokenGrant {
        scope: scope.into(),
        tenants: tenants.iter().map(|t| (*t).to_owned()).collect(),
        ..TokenGrant::default()
    }
}

async fn callers(db: &TestDb) -> Vec<Caller> {
    let (revoked, revoked_token) = stored(db, grant("admin", &[])).await;
    db.store.revoke_api_token(&revoked.id).await.unwrap();
    // Expired a minute ago: a backdated row, as the store keeps it.
    let (new, expired_token) = grant("admin", &[]).check(Utc::now()).unwrap();
    db.store
        .add_api_token(NewApiToken {
            expires_at: Some(Utc::now() - Duration::minutes(1)),
            ..new
        })
        .await
        .unwrap();
    let token = |name, token: String, scope, limited| Caller {
        name,
        token: Some(token),
        scope: Some(scope),
        limited,
    };
    vec![
        Caller {
            name: "no token",
            token: None,
            scope: None,
            limited: None,
        },
        Caller {
            name: "unknown token",
            token: Some("remit_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".into()),
            scope: None,
            limited: None,
        },
        Caller {
            name: "revoked admin token",
            token: Some(revoked_token),
            scope: None,
            limited: None,
        },
        Caller {
            name: "expired admin token",
            token: Some(expired_token),
            scope: None,
            limited: None,
        },
        token("read", stored(db, grant("read", &[])).await.1, "read", None),
        token(
            "schedule",
            stored(db, grant("schedule", &[])).await.1,
            "schedule",
            None,
        ),
        token(
            "schedule for clinic-1",
            stored(db, grant("schedule", &["clinic-1"])).await.1,
            "schedule",
            Some(true),
        ),
        token(
            "schedule for another tenant",
            stored(db, grant("schedule", &["clinic-2"])).await.1,
            "schedule",
            Some(false),
        ),
        token(
            "read for another tenant",
            stored(db, grant("read", &["clinic-2"])).await.1,
            "read",
            Some(false),
        ),
        token(
            "admin",
            stored(db, grant("admin", &[])).await.1,
            "admin",
            None,
        ),
        token("bootstrap", API_TOKEN.into(), "admin", None),
    ]
}

fn task_body(reminder: &str) -> Value {
    json!({
        "tenant_id": "clinic-1", "reminder_id": reminder, "destination_id": "crm",
        "region": "eu", "not_before": (Utc::now() + Duration::days(1)).to_rfc3339(),
        "payload": {"reminder": reminder},
    })
}

/// Registers `crm` (eu) at `hook` and schedules a task for tomorrow there;
/// the task's id.
pub(super) async fn fixture(api: &Api, hook: &str) -> String {
    let (status, body) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": hook}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, task) = api.post("/v1/tasks", task_body("fixture")).await;
    assert_eq!(status, 201, "{task}");
    task["id"].as_str().unwrap().to_owned()
}

#[actix_rt::test]
async fn every_operation_admits_exactly_its_scopes_on_postgres() {
    every_operation_admits_exactly_its_scopes(Backend::Postgres).await;
}

#[actix_rt::test]
async fn every_operation_admits_exactly_its_scopes_on_sqlite() {
    every_operation_admits_exactly_its_scopes(Backend::Sqlite).await;
}

async fn every_operation_admits_exactly_its_scopes(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let hook = receiver.url("/hook");
    let task_id = fixture(&api, &hook).await;
    let (status, job) = api
        .post("/v1/tasks/replay", json!({"destination_id": "crm"}))
        .await;
    assert_eq!(status, 202, "{job}");
    let job_id = job["id"].as_str().unwrap().to_owned();
    let (victim, _) = stored(&db, grant("read", &[])).await;
    let callers = callers(&db).await;

    let document = checked_in();
    let mut checked = 0;
    for (template, operations) in document["paths"].as_object().unwrap() {
        if !template.starts_with("/v1/") {
            continue;
        }
        // The routes about one tenant's tasks: by id, or by the fixture's
        // tenant and reminder.
        let per_task = template.starts_with("/v1/tasks")
            || template.starts_with("/v1/tenants/{tenant_id}/reminders/");
        let template_path = template
            .replace("{tenant_id}", "clinic-1")
            .replace("{reminder_id}", "fixture");
        let path = if template.starts_with("/v1/tasks/{id}") {
            template.replace("{id}", &task_id)
        } else if template.starts_with("/v1/replays/{id}") {
            template.replace("{id}", &job_id)
        } else if template.starts_with("/v1/tokens/{id}") {
            template.replace("{id}", victim.id.as_str())
        } else {
            template_path.replace("{id}", "crm")
        };
        for (method, operation) in operations.as_object().unwrap() {
            let method = method.to_uppercase();
            let scopes: Vec<&str> = operation["security"]
                .as_array()
                .unwrap_or_else(|| panic!("{method} {template} declares no security"))
                .iter()
                .map(|r| r["bearer"][0].as_str().unwrap())
                .collect();
            assert!(!scopes.is_empty(), "{method} {template}");
            for (n, caller) in callers.iter().enumerate() {
                let body = match (method.as_str(), template.as_str()) {
                    ("POST", "/v1/destinations") => {
                        Some(json!({"id": "crm", "region": "eu", "url": hook}))
                    }
                    ("POST", "/v1/tasks") => Some(task_body(&format!("single-{n}"))),
                    ("POST", "/v1/tasks/batch") => {
                        Some(json!({"tasks": [task_body(&format!("batch-{n}"))]}))
                    }
                    ("POST", "/v1/tokens") => Some(json!({"scope": "read"})),
                    ("POST", "/v1/tasks/replay") => Some(json!({"destination_id": "crm"})),
                    ("PUT", _) => Some(json!({
                        "destination_id": "crm", "region": "eu",
                        "not_before": (Utc::now() + Duration::days(1)).to_rfc3339(),
                        "payload": {"reminder": "fixture"},
                    })),
                    ("POST", t) if t.ends_with("/reschedule") => Some(json!({
                        "not_before": (Utc::now() + Duration::days(2)).to_rfc3339(),
                    })),
                    ("POST", _) => Some(json!({})),
                    _ => None,
                };
                let (status, answer) = api
                    .call(&method, &path, caller.token.as_deref(), body)
                    .await;
                let what = format!("{method} {template} by {}: {answer}", caller.name);
                let Some(scope) = caller.scope else {
                    assert_eq!(status, 401, "{what}");
                    assert_eq!(answer["error"]["code"], "unauthorized", "{what}");
                    continue;
                };
                if !scopes.contains(&scope) {
                    assert_eq!(status, 403, "{what}");
                    assert_eq!(answer["error"]["code"], "forbidden", "{what}");
                    continue;
                }
                match caller.limited {
                    Some(_) if !per_task => {
                        assert_eq!(status, 403, "{what}");
                        continue;
                    }
                    Some(false) => {
                        other_tenant_refused(&api, caller, &method, template, status, &answer)
                            .await;
                        continue;
                    }
                    _ => {}
                }
                // The walk's earlier calls ended the fixture's task (a
                // cancel): moving it back is a replay's, an admin's, which
                // a schedule token is refused by the task's state, not the
                // route's scope.
                let revival = status == 403
                    && scope == "schedule"
                    && answer["error"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("which takes the admin scope"));
                assert!(
                    revival || (!matches!(status, 401 | 403 | 404) && status < 500),
                    "{what} answered {status}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 9, "only {checked} operations under /v1");
    runtime.shutdown().await;
}

/// A token limited to another tenant: that tenant's task is answered as a
/// task that does not exist, and scheduling for it is refused naming
/// `tenant_id`.
async fn other_tenant_refused(
    api: &Api,
    caller: &Caller,
    method: &str,
    template: &str,
    status: u16,
    answer: &Value,
) {
    let what = format!("{method} {template} by {}: {answer}", caller.name);
    match (method, template) {
        ("POST", "/v1/tasks") => {
            assert_eq!(status, 403, "{what}");
            assert_eq!(answer["error"]["field"], "tenant_id", "{what}");
        }
        ("POST", "/v1/tasks/batch") => {
            assert_eq!(status, 200, "{what}");
            assert_eq!(answer["results"][0]["status"], 403, "{what}");
            assert_eq!(
                answer["results"][0]["error"]["field"], "tenant_id",
                "{what}"
            );
        }
        ("GET", "/v1/tasks") => {
            // The list holds none of another tenant's tasks.
            assert_eq!(status, 200, "{what}");
            assert_eq!(answer["tasks"], json!([]), "{what}");
        }
        ("GET", "/v1/tasks/{id}") => {
            assert_eq!(status, 404, "{what}");
            // Exactly what a task that does not exist gets.
            let missing = uuid::Uuid::new_v4().to_string();
            let (_, absent) = api
                .call(
                    "GET",
                    &format!("/v1/tasks/{missing}"),
                    caller.token.as_deref(),
                    None,
                )
                .await;
            let id = named_id(answer);
            assert_eq!(
                answer.to_string().replace(&id, &missing),
                absent.to_string(),
                "{what}"
            );
        }
        _ => assert!(matches!(status, 403 | 404), "{what}"),
    }
}

/// The task id a 404 names.
fn named_id(answer: &Value) -> String {
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    message.rsplit(' ').next().unwrap_or_default().to_owned()
}
