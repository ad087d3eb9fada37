//! The API holds its contract: bodies are JSON objects, a 400 names the
//! field and not the value, and every time it returns is RFC 3339.

use remit::domain::Region;
use serde_json::{json, Value};

use super::client::Api;
use super::task_body;
use crate::support::{self, TestDb};

/// The field and code of an error answer.
fn refusal(answer: &Value) -> (Option<&str>, Option<&str>) {
    (
        answer["error"]["field"].as_str(),
        answer["error"]["code"].as_str(),
    )
}

#[actix_rt::test]
async fn bodies_are_json_objects_only() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    support::destination(&db, "crm", Region::EU, "http://127.0.0.1:9/", None).await;

    // serde's positional form: the fields in order, as an array.
    let task = json!([
        "clinic-1",
        "r1",
        "crm",
        "eu",
        "2026-08-13T09:00:00Z",
        {},
        60
    ]);
    let cases = [
        ("/v1/tasks", task.clone()),
        (
            "/v1/destinations",
            json!(["crm", "eu", "https://hooks.example.com/"]),
        ),
        ("/v1/tasks/batch", json!([[task.clone()]])),
        ("/v1/tasks", json!("clinic-1")),
    ];
    for (path, body) in cases {
        let (status, answer) = api.post(path, body).await;
        assert_eq!(status, 400, "{path}: {answer}");
        assert_eq!(refusal(&answer), (None, Some("bad_request")), "{answer}");
        assert_eq!(answer["error"]["message"], "must be a JSON object");
    }
    // In a batch, a task written as an array is that task's refusal.
    let (status, answer) = api
        .post(
            "/v1/tasks/batch",
            json!({"tasks": [task, task_body("crm", "r2")]}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["status"], 400, "{answer}");
    assert_eq!(answer["results"][1]["status"], 201, "{answer}");
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn a_400_names_the_field_not_the_value() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);

    let cases = [
        ("not_before", json!(5)),
        ("not_before", json!(true)),
        ("tenant_id", json!(12345)),
        ("region", json!(["eu"])),
        ("retry_horizon_seconds", json!(false)),
        ("retry_horizon_seconds", json!(-1)),
        ("retry_horizon_seconds", json!(86400.5)),
    ];
    for (field, value) in cases {
        let mut body = task_body("crm", "r1");
        body[field] = value.clone();
        let (status, answer) = api.post("/v1/tasks", body.clone()).await;
        assert_eq!(status, 400, "{field} = {value}: {answer}");
        assert_eq!(refusal(&answer), (Some(field), Some("bad_request")));
        // The same in a batch, as that task's answer.
        let (_, answer) = api.post("/v1/tasks/batch", json!({"tasks": [body]})).await;
        let result = &answer["results"][0];
        assert_eq!(result["status"], 400, "{answer}");
        assert_eq!(result["error"]["field"], field, "{answer}");
    }
    let (status, answer) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": 443}),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(refusal(&answer), (Some("url"), Some("bad_request")));
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn returned_times_stay_rfc_3339() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    support::destination(&db, "crm", Region::EU, "http://127.0.0.1:9/", None).await;

    // The latest not_before with the longest horizon ends within year 9999.
    let mut latest = task_body("crm", "latest");
    latest["not_before"] = json!("9989-12-31T23:59:59Z");
    latest["retry_horizon_seconds"] = json!(315_360_000);
    let (status, created) = api.post("/v1/tasks", latest).await;
    assert_eq!(status, 201, "{created}");
    let (_, task) = api
        .get(&format!("/v1/tasks/{}", created["id"].as_str().unwrap()))
        .await;
    assert_eq!(task["retry_horizon_at"], "9999-12-29T23:59:59Z", "{task}");

    // An integer written with a zero fraction is that integer.
    let mut whole = task_body("crm", "whole");
    whole["not_before"] = json!("2999-01-01T00:00:00Z");
    whole["retry_horizon_seconds"] = json!(86400.0);
    let (status, created) = api.post("/v1/tasks", whole).await;
    assert_eq!(status, 201, "{created}");
    let (_, task) = api
        .get(&format!("/v1/tasks/{}", created["id"].as_str().unwrap()))
        .await;
    assert_eq!(task["retry_horizon_at"], "2999-01-02T00:00:00Z", "{task}");

    // Past the bounds: refused on the field, nothing written.
    let cases = [
        ("not_before", json!("9990-01-01T00:00:00Z"), None),
        (
            "not_before",
            json!("9999-12-31T23:59:59Z"),
            Some(315_360_000),
        ),
        ("not_before", json!("0001-01-01T00:00:00+01:00"), None),
        (
            "retry_horizon_seconds",
            json!("2026-08-13T09:00:00Z"),
            Some(315_360_001),
        ),
        (
            "retry_horizon_seconds",
            json!("2026-08-13T09:00:00Z"),
            Some(u64::MAX),
        ),
    ];
    for (field, not_before, horizon) in cases {
        let mut body = task_body("crm", "bounds");
        body["not_before"] = not_before.clone();
        if let Some(horizon) = horizon {
            body["retry_horizon_seconds"] = json!(horizon);
        }
        let (status, answer) = api.post("/v1/tasks", body).await;
        assert_eq!(status, 422, "{not_before} {horizon:?}: {answer}");
        assert_eq!(refusal(&answer), (Some(field), Some("invalid")));
    }
    let mut huge = task_body("crm", "bounds");
    huge["retry_horizon_seconds"] = json!(1e300);
    let (status, answer) = api.post("/v1/tasks", huge).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(refusal(&answer).0, Some("retry_horizon_seconds"));
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn credentials_in_a_destination_url_are_refused_and_never_echoed() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);

    for url in [
        "https://remit:hunter2@hooks.example.com/in",
        "https://remit@hooks.example.com/in",
        "http://remit:hunter2@127.0.0.1:9/in",
    ] {
        let (status, answer) = api
            .post(
                "/v1/destinations",
                json!({"id": "crm", "region": "eu", "url": url}),
            )
            .await;
        assert_eq!(status, 422, "{answer}");
        assert_eq!(refusal(&answer), (Some("url"), Some("invalid")));
        assert!(!answer.to_string().contains("hunter2"), "{answer}");
    }
    runtime.shutdown().await;
}
