//! POST /v1/tasks/replay and GET /v1/replays/{id}: a bulk replay by
//! filter delivers every matching failed task and none other, reports its
//! progress, and refuses a bad filter naming the field.

use std::time::Duration;

use remit::domain::{Region, TaskId, TaskState};
use serde_json::{json, Value};

use super::client::Api;
use crate::support::{self, Backend, Receiver, Reply, TestDb};

fn body(tenant: &str, reminder: &str) -> Value {
    json!({
        "tenant_id": tenant,
        "reminder_id": reminder,
        "destination_id": "crm",
        "region": "eu",
        "not_before": chrono::Utc::now().to_rfc3339(),
        "payload": {"reminder": reminder},
    })
}

#[actix_rt::test]
async fn bulk_replay_by_filter_delivers_the_matching_failed_tasks_on_postgres() {
    bulk_replay_by_filter(Backend::Postgres).await;
}

#[actix_rt::test]
async fn bulk_replay_by_filter_delivers_the_matching_failed_tasks_on_sqlite() {
    bulk_replay_by_filter(Backend::Sqlite).await;
}

async fn bulk_replay_by_filter(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![Reply::status(410); 3], Reply::ok());
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let (status, answer) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/hook")}),
        )
        .await;
    assert_eq!(status, 201, "{answer}");
    let mut ids = Vec::new();
    for (tenant, reminder) in [("clinic-1", "a"), ("clinic-1", "b"), ("clinic-2", "c")] {
        let (status, task) = api.post("/v1/tasks", body(tenant, reminder)).await;
        assert_eq!(status, 201, "{task}");
        ids.push(TaskId(task["id"].as_str().unwrap().parse().unwrap()));
    }
    support::wait_for_state(&db, &ids, TaskState::Failed, Duration::from_secs(10)).await;

    // Refusals name the field.
    let now = chrono::Utc::now().to_rfc3339();
    for (request, status, field) in [
        (json!({"tenant_id": ""}), 422, "tenant_id"),
        (json!({"from": "yesterday"}), 422, "from"),
        (json!({"from": now, "until": now}), 422, "until"),
        (json!({"reason": " "}), 422, "reason"),
        (json!({}), 422, "filter"),
        (json!({"tenant": "clinic-1"}), 400, "tenant"),
    ] {
        let (got, answer) = api.post("/v1/tasks/replay", request.clone()).await;
        assert_eq!(
            (got, answer["error"]["field"].as_str()),
            (status, Some(field)),
            "{request}: {answer}"
        );
    }

    let (status, job) = api
        .post(
            "/v1/tasks/replay",
            json!({"tenant_id": "clinic-1", "destination_id": "crm"}),
        )
        .await;
    assert_eq!(status, 202, "{job}");
    assert_eq!(job["region"], "eu");
    assert_eq!(job["filter"]["tenant_id"], "clinic-1");
    assert_eq!(job["filter"]["destination_id"], "crm");
    assert_eq!(job["filter"]["reason"], Value::Null);
    assert_eq!(job["requested_by"], "bootstrap");
    let id = job["id"].as_str().unwrap().to_owned();

    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let finished = loop {
        let (status, now) = api.get(&format!("/v1/replays/{id}")).await;
        assert_eq!(status, 200, "{now}");
        if now["state"] == "finished" {
            break now;
        }
        assert_eq!(now["state"], "running");
        assert!(std::time::Instant::now() < deadline, "not finished: {now}");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(finished["replayed"], 2);
    assert!(finished["finished_at"].is_string());
    support::wait_for_state(
        &db,
        &ids[..2],
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    let (status, other) = api.get(&format!("/v1/tasks/{}", ids[2].0)).await;
    assert_eq!(
        (status, &other["state"]),
        (200, &json!("failed")),
        "another tenant's task stays failed"
    );

    for missing in ["not-a-uuid", "00000000-0000-7000-8000-000000000000"] {
        let (status, answer) = api.get(&format!("/v1/replays/{missing}")).await;
        assert_eq!(status, 404, "{answer}");
    }
    runtime.shutdown().await;
}
