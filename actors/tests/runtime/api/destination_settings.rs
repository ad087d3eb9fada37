//! A destination's settings through `PATCH /v1/destinations/{id}`: each
//! refusal names its field, `null` gives a setting back to the runtime, a
//! secret header is sent but never shown, a timeout and an attempt budget
//! of its own hold, and `DELETE` refuses while tasks are live, cancels
//! them when asked, and leaves an id that can be registered again.

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{Region, TaskState};
use serde_json::{json, Value};

use super::client::Api;
use super::task_body;
use crate::support::{self, Backend, Receiver, Reply, TestDb};

const SECRET: &str = "Bearer 0123456789abcdef-tail";

async fn registered(api: &Api, receiver: &Receiver) {
    let (status, created) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/hook")}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
}

#[actix_rt::test]
async fn refusals_name_their_field() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let receiver = Receiver::start();
    registered(&api, &receiver).await;
    let cases = [
        (json!({"rate_per_second": 0}), "rate_per_second"),
        (json!({"burst": 0}), "burst"),
        (json!({"max_in_flight": 2_000_000}), "max_in_flight"),
        // Over half the tests' 10 s lease.
        (json!({"timeout_ms": 6000}), "timeout_ms"),
        (json!({"late_after_seconds": 0}), "late_after_seconds"),
        (
            json!({"disable_after_failures": 0}),
            "disable_after_failures",
        ),
        (json!({"url": "https://user:pw@example.com/"}), "url"),
        (json!({"url": "ftp://example.com/"}), "url"),
        (
            json!({"headers": [{"name": "Webhook-Signature", "value": "x"}]}),
            "headers[0].name",
        ),
        (
            json!({"headers": [{"name": "x-a", "value": "1"}, {"name": "bad name", "value": "2"}]}),
            "headers[1].name",
        ),
        (
            json!({"headers": [{"name": "x-a", "value": "line\nbreak"}]}),
            "headers[0].value",
        ),
        (json!({"headers": [{"name": "x-a"}]}), "headers[0].value"),
        // A secret kept by name needs one stored under that name.
        (
            json!({"headers": [{"name": "x-key", "secret": true}]}),
            "headers[0].value",
        ),
    ];
    for (body, field) in cases {
        let (status, refused) = api.patch("/v1/destinations/crm", body.clone()).await;
        assert_eq!(status, 422, "{body} → {refused}");
        assert_eq!(
            refused["error"]["field"],
            json!(field),
            "{body} → {refused}"
        );
    }
    let (status, refused) = api.patch("/v1/destinations/crm", json!({"rate": 5})).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["field"], json!("rate"));
    let (status, _) = api
        .patch("/v1/destinations/nobody", json!({"burst": 2}))
        .await;
    assert_eq!(status, 404);
    // Nothing was half-written by any of the refusals.
    let (_, view) = api.get("/v1/destinations/crm").await;
    assert_eq!(view["burst"], Value::Null, "{view}");
    assert_eq!(view["headers"], json!([]), "{view}");
    runtime.shutdown().await;
}

async fn settings_hold_on(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.retry.backoff_base_ms = 10;
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    let receiver = Receiver::start();
    registered(&api, &receiver).await;

    let (status, view) = api
        .patch(
            "/v1/destinations/crm",
            json!({
                "rate_per_second": 50, "burst": 5, "max_in_flight": 3, "late_after_seconds": 600,
                "retry_horizon_seconds": 120,
                "headers": [
                    {"name": "X-Tenant-Route", "value": "blue"},
                    {"name": "Authorization", "value": SECRET, "secret": true},
                ],
            }),
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["rate_per_second"], json!(50.0));
    assert_eq!(view["burst"], json!(5));
    assert_eq!(view["late_after_seconds"], json!(600));
    assert_eq!(
        view["headers"],
        json!([
            {"name": "x-tenant-route", "value": "blue", "secret": false, "hint": null},
            {"name": "authorization", "value": null, "secret": true, "hint": "tail"},
        ])
    );
    assert!(!view.to_string().contains("0123456789abcdef"), "{view}");

    // The headers go with each request, the secret in full.
    let (status, created) = api.post("/v1/tasks", task_body("crm", "r-headers")).await;
    assert_eq!(status, 201);
    // A task that names no horizon takes the destination's; one that
    // names its own keeps it.
    let horizon =
        |task: &remit::domain::Task| (task.retry_horizon_at - task.not_before).num_seconds();
    let id = remit::domain::TaskId(created["id"].as_str().unwrap().parse().unwrap());
    assert_eq!(horizon(&db.store.task(id).await.unwrap().unwrap()), 120);
    let mut own = task_body("crm", "r-own-horizon");
    own["retry_horizon_seconds"] = json!(300);
    let (status, created) = api.post("/v1/tasks", own).await;
    assert_eq!(status, 201, "{created}");
    let id = remit::domain::TaskId(created["id"].as_str().unwrap().parse().unwrap());
    assert_eq!(horizon(&db.store.task(id).await.unwrap().unwrap()), 300);
    receiver
        .wait_until(Duration::from_secs(10), "two requests", |r| r.len() >= 2)
        .await;
    let request = &receiver.requests_to("/hook")[0];
    assert_eq!(request.header("x-tenant-route"), Some("blue"));
    assert_eq!(request.header("authorization"), Some(SECRET));
    assert!(request.header("webhook-id").is_some());

    // A change that leaves the secret out by value keeps it; `null` gives
    // a setting back to the runtime; what is not named stays.
    let (status, view) = api
        .patch(
            "/v1/destinations/crm",
            json!({
                "burst": null, "timeout_ms": 200, "max_attempts": 1,
                "headers": [{"name": "authorization", "secret": true}],
            }),
        )
        .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["burst"], Value::Null);
    assert_eq!(view["rate_per_second"], json!(50.0));
    assert_eq!(view["timeout_ms"], json!(200));
    assert_eq!(view["headers"][0]["hint"], json!("tail"));
    assert_eq!(view["headers"].as_array().unwrap().len(), 1);

    // Its own timeout (200 ms, the runtime's is 2 s) ends a slow request,
    // and its own budget (one attempt) fails the task after it.
    receiver.script(
        "/hook",
        vec![],
        Reply::ok().delayed(Duration::from_millis(800)),
    );
    let (status, created) = api.post("/v1/tasks", task_body("crm", "r-slow")).await;
    assert_eq!(status, 201, "{created}");
    let id = remit::domain::TaskId(created["id"].as_str().unwrap().parse().unwrap());
    support::wait_for_state(&db, &[id], TaskState::Failed, Duration::from_secs(10)).await;
    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(task.failure_reason.as_deref(), Some("max_attempts"));
    let attempts = db.store.attempts(id).await.unwrap();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(
        attempts[0].observed.transport_error.as_deref(),
        Some("timeout")
    );
    let sent = receiver.requests_to("/hook");
    assert_eq!(
        sent.last().unwrap().header("authorization"),
        Some(SECRET),
        "the kept secret is still sent"
    );

    // Another admin moves only the URL, to a host of theirs: refused, the
    // header named, its value nowhere in the answer, nothing written.
    let other = Receiver::start();
    let (status, refused) = api
        .patch(
            "/v1/destinations/crm",
            json!({"url": other.url("/collect")}),
        )
        .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["field"], json!("url"), "{refused}");
    let reason = refused["error"]["message"].to_string();
    assert!(reason.contains("authorization"), "{refused}");
    assert!(!refused.to_string().contains(SECRET), "{refused}");
    // Moved with the header dropped, the new host gets a request without it.
    let (status, view) = api
        .patch(
            "/v1/destinations/crm",
            json!({"url": other.url("/collect"), "max_attempts": null, "timeout_ms": null,
                   "headers": []}),
        )
        .await;
    assert_eq!(status, 200, "{view}");
    let (status, _) = api.post("/v1/tasks", task_body("crm", "r-moved")).await;
    assert_eq!(status, 201);
    other
        .wait_until(Duration::from_secs(10), "the moved request", |r| {
            !r.is_empty()
        })
        .await;
    assert_eq!(other.requests()[0].header("authorization"), None);
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn settings_hold_on_postgres() {
    settings_hold_on(Backend::Postgres).await;
}

#[actix_rt::test]
async fn settings_hold_on_sqlite() {
    settings_hold_on(Backend::Sqlite).await;
}

async fn deletion_on(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let receiver = Receiver::start();
    registered(&api, &receiver).await;
    // Held back by its own pause: its tasks stay live.
    let (status, _) = api.post("/v1/destinations/crm/disable", json!({})).await;
    assert_eq!(status, 200);
    let mut live = Vec::new();
    for i in 0..3 {
        let (status, created) = api
            .post("/v1/tasks", task_body("crm", &format!("r{i}")))
            .await;
        assert_eq!(status, 201, "{created}");
        live.push(remit::domain::TaskId(
            created["id"].as_str().unwrap().parse().unwrap(),
        ));
    }
    let (status, refused) = api.delete("/v1/destinations/crm").await;
    assert_eq!(status, 409, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("3 of its tasks have not ended"),
        "{refused}"
    );
    assert!(message.contains("?cancel_tasks=true"), "{refused}");
    assert!(!message.contains("--cancel-tasks"), "{refused}");
    let (status, deleted) = api.delete("/v1/destinations/crm?cancel_tasks=true").await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["live_tasks"], json!(3));
    assert_eq!(deleted["destination"]["id"], json!("crm"));
    assert_eq!(deleted["cancel_job"]["action"], json!("cancel"));
    assert_eq!(
        deleted["cancel_job"]["filter"]["destination_id"],
        json!("crm")
    );
    support::wait_for_state(&db, &live, TaskState::Cancelled, Duration::from_secs(15)).await;
    assert!(receiver.requests_to("/hook").is_empty());

    // Gone for every read, and for new tasks.
    let (status, _) = api.get("/v1/destinations/crm").await;
    assert_eq!(status, 404);
    let (status, _) = api.delete("/v1/destinations/crm").await;
    assert_eq!(status, 404);
    let (status, refused) = api.post("/v1/tasks", task_body("crm", "r-late")).await;
    assert!(matches!(status, 404 | 422), "{status} {refused}");
    let (_, listed) = api.get("/v1/destinations").await;
    assert!(!listed.to_string().contains("\"crm\""), "{listed}");

    // Its id registers again, as new: enabled, no settings of before.
    let (status, again) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/again")}),
        )
        .await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(again["enabled"], json!(true));
    assert_eq!(again["disabled_reason"], Value::Null);
    let (status, _) = api.post("/v1/tasks", task_body("crm", "r-new")).await;
    assert_eq!(status, 201);
    receiver
        .wait_until(Duration::from_secs(10), "the new destination's", |r| {
            r.iter().any(|r| r.path == "/again")
        })
        .await;
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn deletion_on_postgres() {
    deletion_on(Backend::Postgres).await;
}

#[actix_rt::test]
async fn deletion_on_sqlite() {
    deletion_on(Backend::Sqlite).await;
}

/// A read gives the destination's version as its `ETag`; a change that
/// carries it in `If-Match` goes through while nothing changed, and is
/// refused (412, nothing written) once something did, so two editors never
/// silently undo each other's change.
#[actix_rt::test]
async fn a_change_against_an_older_version_is_refused() {
    let db = TestDb::new().await;
    let receiver = Receiver::start();
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    registered(&api, &receiver).await;
    let client = awc::Client::default();
    let url = format!("http://{}/v1/destinations/crm", runtime.api_addr());
    let auth = ("authorization", format!("Bearer {}", support::API_TOKEN));
    let read = || async {
        let response = client
            .get(&url)
            .insert_header(auth.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        response
            .headers()
            .get("etag")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned()
    };
    let patch = |tag: Option<String>, body: Value| {
        let mut request = client.patch(&url).insert_header(auth.clone());
        if let Some(tag) = tag {
            request = request.insert_header(("if-match", tag));
        }
        async move {
            let mut response = request.send_json(&body).await.unwrap();
            let tag = response
                .headers()
                .get("etag")
                .map(|v| v.to_str().unwrap().to_owned());
            let body: Value = serde_json::from_slice(&response.body().await.unwrap()).unwrap();
            (response.status().as_u16(), tag, body)
        }
    };
    let first = read().await;
    assert!(first.starts_with('"') && first.ends_with('"'), "{first}");

    // The first editor's change, against the version it read.
    let (status, changed, _) = patch(Some(first.clone()), json!({"rate_per_second": 5})).await;
    assert_eq!(status, 200);
    let changed = changed.expect("the new version");
    assert_ne!(changed, first);
    assert_eq!(read().await, changed, "a read gives the same version");

    // The second editor read before that change: refused, nothing written.
    let (status, _, refused) = patch(Some(first), json!({"rate_per_second": 1})).await;
    assert_eq!(status, 412, "{refused}");
    assert_eq!(refused["error"]["code"], json!("precondition_failed"));
    let (_, view) = api.get("/v1/destinations/crm").await;
    assert_eq!(view["rate_per_second"], json!(5.0));

    // `*` and no header change whatever the version; a weak tag matches
    // none, and a tag without its quotes is taken as it is.
    let (status, _, _) = patch(Some("*".into()), json!({"burst": 2})).await;
    assert_eq!(status, 200);
    let (status, _, _) = patch(None, json!({"burst": 3})).await;
    assert_eq!(status, 200);
    let current = read().await;
    let (status, _, refused) = patch(Some(format!("W/{current}")), json!({"burst": 4})).await;
    assert_eq!(status, 412, "{refused}");
    let bare = current.trim_matches('"').to_owned();
    let (status, _, refused) = patch(Some(bare), json!({"burst": 4})).await;
    assert_eq!(status, 200, "{refused}");
    runtime.shutdown().await;
}
