//! `ordering_key` over HTTP: accepted on a task and in a batch, shown in
//! the task's view, refused with a message that names the field and what
//! is accepted, and part of what makes a repeat.

use remit::domain::Region;
use serde_json::{json, Value};

use super::client::Api;
use super::task_body;
use crate::support::{self, TestDb};

fn keyed(reminder: &str, key: Value) -> Value {
    let mut body = task_body("crm", reminder);
    body["ordering_key"] = key;
    body
}

#[actix_rt::test]
async fn an_ordering_key_is_taken_shown_and_checked() {
    let db = TestDb::with_database_clock().await;
    // Tasks due in a day: nothing is sent while the test looks.
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    support::destination(&db, "crm", Region::EU, "http://127.0.0.1:9/", None).await;
    let later = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();

    let mut body = keyed("r1", json!("patient-7"));
    body["not_before"] = json!(later);
    let (status, created) = api.post("/v1/tasks", body.clone()).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (_, task) = api.get(&format!("/v1/tasks/{id}")).await;
    assert_eq!(task["ordering_key"], "patient-7", "{task}");

    // The same ids with another key, or none, are not a repeat.
    for other in [json!("patient-8"), Value::Null] {
        let mut changed = body.clone();
        changed["ordering_key"] = other;
        let (status, answer) = api.post("/v1/tasks", changed).await;
        assert_eq!(status, 409, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("ordering_key"),
            "{answer}"
        );
    }
    let (status, _) = api.post("/v1/tasks", body).await;
    assert_eq!(status, 200, "the same request is a repeat");

    let mut unkeyed = task_body("crm", "r2");
    unkeyed["not_before"] = json!(later);
    let (_, created) = api.post("/v1/tasks", unkeyed).await;
    let (_, task) = api
        .get(&format!("/v1/tasks/{}", created["id"].as_str().unwrap()))
        .await;
    assert_eq!(task["ordering_key"], Value::Null, "{task}");

    let too_long = "k".repeat(201);
    for bad in [json!(""), json!("   "), json!(too_long), json!("a\u{1}b")] {
        let (status, answer) = api.post("/v1/tasks", keyed("r3", bad.clone())).await;
        assert_eq!(status, 422, "{bad}: {answer}");
        assert_eq!(answer["error"]["field"], "ordering_key", "{answer}");
        assert_eq!(answer["error"]["code"], "invalid", "{answer}");
    }
    let (status, answer) = api.post("/v1/tasks", keyed("r3", json!(7))).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["field"], "ordering_key", "{answer}");
    assert_eq!(
        db.count("SELECT count(*) AS n FROM tasks WHERE reminder_id = 'r3'")
            .await,
        0,
        "a refused task writes nothing"
    );

    // In a batch each task is answered on its own.
    let (status, answer) = api
        .post(
            "/v1/tasks/batch",
            json!({"tasks": [keyed("r4", json!("patient-9")), keyed("r5", json!(""))]}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["status"], 201, "{answer}");
    assert_eq!(answer["results"][1]["status"], 422, "{answer}");
    assert_eq!(
        answer["results"][1]["error"]["field"], "ordering_key",
        "{answer}"
    );
    let (_, task) = api
        .get(&format!(
            "/v1/tasks/{}",
            answer["results"][0]["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(task["ordering_key"], "patient-9", "{task}");
    runtime.shutdown().await;
}
