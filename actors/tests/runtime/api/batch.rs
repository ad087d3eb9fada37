//! POST /v1/tasks/batch: each task answered as POST /v1/tasks would answer
//! it, in order; one bad task never rejects its neighbours.

use remit::domain::{Region, TaskId};
use remit::store::Schedule;
use serde_json::{json, Value};

use super::client::Api;
use super::task_body;
use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn a_batch_answers_each_task_in_order() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    // The same request again (its deadline included) is a repeat.
    let old = task_body("crm", "old");
    let (status, _) = api.post("/v1/tasks", old.clone()).await;
    assert_eq!(status, 201);

    let mut conflicting = old.clone();
    conflicting["payload"] = json!({"other": true});
    let mut unknown_destination = task_body("nowhere", "lost");
    unknown_destination["destination_id"] = json!("nowhere");
    let mut missing_field = task_body("crm", "bad");
    missing_field.as_object_mut().unwrap().remove("not_before");
    let (status, body) = api
        .post(
            "/v1/tasks/batch",
            json!({"tasks": [
                task_body("crm", "a"),
                old,
                conflicting,
                unknown_destination,
                missing_field,
                "not an object",
                task_body("crm", "b"),
            ]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let results = body["results"].as_array().unwrap();
    let statuses: Vec<u64> = results
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [201, 200, 409, 422, 400, 400, 201]);
    assert_eq!(results[3]["error"]["field"], "destination_id");
    assert_eq!(results[4]["error"]["field"], "not_before");
    assert_eq!(results[0]["state"], "pending");
    assert!(results[0]["idempotency_key"]
        .as_str()
        .unwrap()
        .starts_with("msg_"));

    // The created tasks are stored whole and can be read back.
    for result in [&results[0], &results[6]] {
        let id = TaskId(result["id"].as_str().unwrap().parse().unwrap());
        let task = db.store.task(id).await.unwrap().unwrap();
        assert!(db.store.payload(&task).await.is_ok());
    }
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn a_batch_over_the_limit_is_refused_whole() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let tasks: Vec<Value> = (0..1_001)
        .map(|i| task_body("crm", &format!("r{i}")))
        .collect();
    let (status, body) = api.post("/v1/tasks/batch", json!({ "tasks": tasks })).await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["field"], "tasks");
    assert_eq!(db.count("SELECT count(*) AS n FROM tasks").await, 0);
    let (status, _) = api
        .call("POST", "/v1/tasks/batch", None, Some(json!({"tasks": []})))
        .await;
    assert_eq!(status, 401, "the token first");
    runtime.shutdown().await;
}
