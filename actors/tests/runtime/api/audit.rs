//! The audit log through the API, on both stores: every admin route called
//! once (a destination's change and delete included) leaves exactly one
//! entry, with the calling token's id and name,
//! the action and its target; scheduling and reads leave none; no secret
//! (a signing secret given or generated, a token, a payload) appears
//! anywhere in the log; GET /v1/audit filters, pages and names a bad
//! parameter.

use std::time::Duration;

use chrono::Utc;
use remit::domain::{Region, TaskId, TaskState};
use serde_json::{json, Value};

use super::client::Api;
use crate::support::{self, Backend, Receiver, Reply, TestDb, API_TOKEN};

const GIVEN_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The API as one token, and the newest entry seen so far.
struct Audited<'a> {
    api: &'a Api,
    token: String,
    seen: i64,
}

impl Audited<'_> {
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, answer) = self.api.call(method, path, Some(&self.token), body).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {answer}"
        );
        answer
    }

    /// The entries written since the last look, oldest first.
    async fn new_entries(&mut self) -> Vec<Value> {
        let (status, page) = self
            .api
            .call("GET", "/v1/audit?limit=500", Some(&self.token), None)
            .await;
        assert_eq!(status, 200, "{page}");
        let mut fresh: Vec<Value> = page["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["id"].as_i64().unwrap() > self.seen)
            .cloned()
            .collect();
        fresh.reverse();
        if let Some(last) = fresh.last() {
            self.seen = last["id"].as_i64().unwrap();
        }
        fresh
    }

    /// Calls the route and checks that it left exactly one entry of
    /// `action` on (`kind`, `id`); answers the route's answer and the entry.
    async fn once(
        &mut self,
        (method, path, body): (&str, &str, Option<Value>),
        action: &str,
        (kind, id): (&str, &str),
    ) -> (Value, Value) {
        let answer = self.call(method, path, body).await;
        let mut fresh = self.new_entries().await;
        assert_eq!(fresh.len(), 1, "{method} {path}: {fresh:?}");
        let entry = fresh.remove(0);
        assert_eq!(entry["action"], action, "{method} {path}: {entry}");
        assert_eq!(
            (
                entry["target"]["kind"].as_str(),
                entry["target"]["id"].as_str()
            ),
            (Some(kind), Some(id)),
            "{method} {path}: {entry}"
        );
        (answer, entry)
    }

    async fn none(&mut self, method: &str, path: &str, body: Option<Value>) -> Value {
        let answer = self.call(method, path, body).await;
        assert_eq!(
            self.new_entries().await,
            Vec::<Value>::new(),
            "{method} {path}"
        );
        answer
    }
}

fn task_body(tenant: &str, reminder: &str, destination: &str, in_days: i64) -> Value {
    json!({
        "tenant_id": tenant, "reminder_id": reminder, "destination_id": destination,
        "region": "eu", "not_before": (Utc::now() + chrono::Duration::days(in_days)).to_rfc3339(),
        "payload": {"reminder": reminder, "renewal": "2026-09-01"},
    })
}

fn later(days: i64) -> Value {
    json!({"not_before": (Utc::now() + chrono::Duration::days(days)).to_rfc3339()})
}

#[actix_rt::test]
async fn every_admin_route_leaves_one_entry_on_postgres() {
    every_admin_route_leaves_one_entry(Backend::Postgres).await;
}

#[actix_rt::test]
async fn every_admin_route_leaves_one_entry_on_sqlite() {
    every_admin_route_leaves_one_entry(Backend::Sqlite).await;
}

async fn every_admin_route_leaves_one_entry(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/gone", vec![], Reply::status(410));
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let mut boot = Audited {
        api: &api,
        token: API_TOKEN.into(),
        seen: 0,
    };
    let made = json!({"scope": "admin", "name": "on call"});
    let ops = boot.call("POST", "/v1/tokens", Some(made)).await;
    let mut fresh = boot.new_entries().await;
    assert_eq!(fresh.len(), 1, "{fresh:?}");
    let entry = fresh.remove(0);
    let ops_id = ops["id"].as_str().unwrap().to_owned();
    assert_eq!(entry["action"], "token.create");
    assert_eq!(
        entry["actor"],
        json!({"kind": "bootstrap", "id": null, "name": null})
    );
    assert_eq!(entry["target"], json!({"kind": "token", "id": ops_id}));
    let mut secrets = vec![
        GIVEN_SECRET.to_owned(),
        ops["token"].as_str().unwrap().to_owned(),
        "2026-09-01".to_owned(),
    ];

    let mut a = Audited {
        api: &api,
        token: ops["token"].as_str().unwrap().to_owned(),
        seen: boot.seen,
    };
    let hook = receiver.url("/hook");
    let crm = json!({"id": "crm", "region": "eu", "url": hook, "secret": GIVEN_SECRET});
    a.once(
        ("POST", "/v1/destinations", Some(crm)),
        "destination.create",
        ("destination", "crm"),
    )
    .await;
    let gone = json!({"id": "gone", "region": "eu", "url": receiver.url("/gone")});
    a.once(
        ("POST", "/v1/destinations", Some(gone)),
        "destination.create",
        ("destination", "gone"),
    )
    .await;
    let reason = Some(json!({"reason": "maintenance"}));
    let (_, disabled) = a
        .once(
            ("POST", "/v1/destinations/crm/disable", reason),
            "destination.disable",
            ("destination", "crm"),
        )
        .await;
    assert_eq!(disabled["after"]["disabled_reason"], "maintenance");
    assert_eq!(
        (
            disabled["before"]["enabled"].clone(),
            disabled["region"].clone()
        ),
        (json!(true), json!("eu"))
    );
    a.once(
        ("POST", "/v1/destinations/crm/enable", None),
        "destination.enable",
        ("destination", "crm"),
    )
    .await;
    let (rotated, _) = a
        .once(
            ("POST", "/v1/destinations/crm/secrets", Some(json!({}))),
            "destination.rotate_secret",
            ("destination", "crm"),
        )
        .await;
    secrets.push(rotated["secret"].as_str().unwrap().to_owned());
    a.once(
        ("POST", "/v1/destinations/crm/retry-now", None),
        "destination.retry_now",
        ("destination", "crm"),
    )
    .await;
    const HEADER_SECRET: &str = "Bearer 7d1c55e0a4b94e2f";
    secrets.push(HEADER_SECRET.to_owned());
    let change = json!({
        "rate_per_second": 7, "timeout_ms": 4000,
        "headers": [{"name": "Authorization", "value": HEADER_SECRET, "secret": true}],
    });
    let (_, updated) = a
        .once(
            ("PATCH", "/v1/destinations/crm", Some(change)),
            "destination.update",
            ("destination", "crm"),
        )
        .await;
    assert_eq!(updated["after"]["rate_per_second"], 7.0, "{updated}");
    assert_eq!(
        updated["before"]["rate_per_second"],
        Value::Null,
        "{updated}"
    );
    let spare = json!({"id": "spare", "region": "eu", "url": receiver.url("/spare")});
    a.once(
        ("POST", "/v1/destinations", Some(spare)),
        "destination.create",
        ("destination", "spare"),
    )
    .await;
    a.once(
        ("DELETE", "/v1/destinations/spare", None),
        "destination.delete",
        ("destination", "spare"),
    )
    .await;

    // Scheduling and reads are not admin actions.
    let mut ids = Vec::new();
    for reminder in [
        "moved",
        "cancelled",
        "erased",
        "r-moved",
        "r-cancelled",
        "r-erased",
    ] {
        let task = a
            .none(
                "POST",
                "/v1/tasks",
                Some(task_body("clinic-1", reminder, "crm", 1)),
            )
            .await;
        ids.push(task["id"].as_str().unwrap().to_owned());
    }
    a.none(
        "POST",
        "/v1/tasks",
        Some(task_body("clinic-2", "other", "crm", 1)),
    )
    .await;
    a.none("GET", "/v1/destinations/crm", None).await;
    a.none("GET", &format!("/v1/tasks/{}", ids[0]), None).await;
    a.none("GET", "/v1/tokens", None).await;
    a.none("GET", "/v1/audit?action=token.create", None).await;

    let task_routes = [
        ("reschedule", Some(later(2)), "task.reschedule"),
        ("cancel", None, "task.cancel"),
        ("erase", None, "task.erase"),
    ];
    for ((route, body, action), id) in task_routes.iter().zip(&ids[..3]) {
        let path = format!("/v1/tasks/{id}/{route}");
        let (_, entry) = a
            .once(("POST", &path, body.clone()), action, ("task", id))
            .await;
        assert_eq!(entry["region"], "eu");
    }
    for ((route, body, action), (id, reminder)) in
        task_routes
            .iter()
            .zip(ids[3..].iter().zip(["r-moved", "r-cancelled", "r-erased"]))
    {
        let path = format!("/v1/tenants/clinic-1/reminders/{reminder}/{route}");
        a.once(("POST", &path, body.clone()), action, ("task", id))
            .await;
    }
    let put = |days| {
        json!({"destination_id": "crm", "region": "eu", "payload": {"renewal": "2026-09-01"},
               "not_before": (Utc::now() + chrono::Duration::days(days)).to_rfc3339()})
    };
    let put_path = "/v1/tenants/clinic-1/reminders/put";
    let created = a.none("PUT", put_path, Some(put(1))).await;
    let put_id = created["task"]["id"].as_str().unwrap().to_owned();
    a.once(
        ("PUT", put_path, Some(put(3))),
        "task.reschedule",
        ("task", &put_id),
    )
    .await;

    // A task that fails (410), replayed.
    let failed = a
        .none(
            "POST",
            "/v1/tasks",
            Some(task_body("clinic-1", "failed", "gone", 0)),
        )
        .await;
    let failed_id = failed["id"].as_str().unwrap().to_owned();
    let task = TaskId(failed_id.parse().unwrap());
    support::wait_for_state(&db, &[task], TaskState::Failed, Duration::from_secs(10)).await;
    let path = format!("/v1/tasks/{failed_id}/replay");
    let (_, replayed) = a
        .once(("POST", &path, None), "task.replay", ("task", &failed_id))
        .await;
    assert_eq!(
        (
            replayed["before"]["state"].clone(),
            replayed["after"]["state"].clone()
        ),
        (json!("failed"), json!("pending"))
    );

    let filter = json!({"destination_id": "gone"});
    for (route, action) in [
        ("replay", "replay_job.create"),
        ("cancel", "cancel_job.create"),
    ] {
        let path = format!("/v1/tasks/{route}");
        let job = a.call("POST", &path, Some(filter.clone())).await;
        let fresh = a.new_entries().await;
        assert_eq!(fresh.len(), 1, "{fresh:?}");
        let entry = &fresh[0];
        assert_eq!(entry["action"], action);
        assert_eq!(entry["target"], json!({"kind": "job", "id": job["id"]}));
    }
    let (_, erased) = a
        .once(
            ("POST", "/v1/tenants/clinic-2/erase", None),
            "tenant.erase",
            ("tenant", "clinic-2"),
        )
        .await;
    assert_eq!(erased["after"]["erased"], 1);
    let victim = boot
        .call("POST", "/v1/tokens", Some(json!({"scope": "read"})))
        .await;
    a.seen = boot.new_entries().await.last().unwrap()["id"]
        .as_i64()
        .unwrap();
    secrets.push(victim["token"].as_str().unwrap().to_owned());
    let victim_id = victim["id"].as_str().unwrap().to_owned();
    let path = format!("/v1/tokens/{victim_id}");
    a.once(
        ("DELETE", &path, None),
        "token.revoke",
        ("token", &victim_id),
    )
    .await;

    // Everything the ops token did carries its id and name; no secret
    // anywhere in the log.
    let (status, all) = api
        .call("GET", "/v1/audit?limit=500", Some(API_TOKEN), None)
        .await;
    assert_eq!(status, 200);
    let entries = all["entries"].as_array().unwrap();
    let by_ops: Vec<&Value> = entries
        .iter()
        .filter(|e| e["actor"]["kind"] == "token")
        .collect();
    assert_eq!(by_ops.len(), 21, "{entries:#?}");
    for e in &by_ops {
        assert_eq!(
            e["actor"],
            json!({"kind": "token", "id": ops_id, "name": "on call"})
        );
    }
    let text = all.to_string();
    for secret in &secrets {
        assert!(
            !text.contains(secret.as_str()),
            "a secret in the audit log: {secret}"
        );
    }
    assert!(!text.contains("whsec_"), "no signing secret at all");

    // Filters, pages, and a bad parameter named.
    let count = |query: &'static str| {
        let api = &api;
        async move {
            let (status, page) = api
                .call("GET", &format!("/v1/audit?{query}"), Some(API_TOKEN), None)
                .await;
            assert_eq!(status, 200, "{query}: {page}");
            page["entries"].as_array().unwrap().len()
        }
    };
    assert_eq!(count("action=task.cancel").await, 2);
    assert_eq!(count("actor=bootstrap").await, 2);
    let by_id = format!("/v1/audit?actor={ops_id}&limit=500");
    let (_, page) = api.call("GET", &by_id, Some(API_TOKEN), None).await;
    assert_eq!(page["entries"].as_array().unwrap().len(), 21);
    assert_eq!(count("target_kind=destination&target_id=crm").await, 6);
    let (_, first) = api
        .call("GET", "/v1/audit?limit=2", Some(API_TOKEN), None)
        .await;
    let next = first["next"].as_i64().unwrap();
    let (_, second) = api
        .call(
            "GET",
            &format!("/v1/audit?limit=2&before={next}"),
            Some(API_TOKEN),
            None,
        )
        .await;
    assert!(second["entries"][0]["id"].as_i64().unwrap() < next);
    let (status, refused) = api
        .call("GET", "/v1/audit?action=explode", Some(API_TOKEN), None)
        .await;
    assert_eq!(
        (status, refused["error"]["field"].as_str()),
        (422, Some("action")),
        "{refused}"
    );
    runtime.shutdown().await;
}
