//! POST /v1/tasks/cancel and GET /v1/replays/{id}: a bulk cancel by filter
//! cancels every matching task that has not ended and none other, reports
//! its action and progress, and refuses a failure reason or a bad filter
//! naming the field.

use std::time::Duration;

use remit::domain::{Region, TaskId};
use serde_json::{json, Value};

use super::client::Api;
use crate::support::{self, Backend, Receiver, TestDb};

/// A task due tomorrow: nothing sends it during the test.
fn body(tenant: &str, reminder: &str) -> Value {
    json!({
        "tenant_id": tenant,
        "reminder_id": reminder,
        "destination_id": "crm",
        "region": "eu",
        "not_before": (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339(),
        "payload": {"reminder": reminder},
    })
}

#[actix_rt::test]
async fn bulk_cancel_by_filter_cancels_the_matching_tasks_on_postgres() {
    bulk_cancel_by_filter(Backend::Postgres).await;
}

#[actix_rt::test]
async fn bulk_cancel_by_filter_cancels_the_matching_tasks_on_sqlite() {
    bulk_cancel_by_filter(Backend::Sqlite).await;
}

async fn bulk_cancel_by_filter(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
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

    // Refusals name the field.
    let now = chrono::Utc::now().to_rfc3339();
    for (request, status, field) in [
        (json!({"tenant_id": ""}), 422, "tenant_id"),
        (json!({"from": "yesterday"}), 422, "from"),
        (json!({"from": now, "until": now}), 422, "until"),
        (json!({}), 422, "filter"),
        (
            json!({"tenant_id": "clinic-1", "reason": "max_attempts"}),
            400,
            "reason",
        ),
        (json!({"tenant": "clinic-1"}), 400, "tenant"),
    ] {
        let (got, answer) = api.post("/v1/tasks/cancel", request.clone()).await;
        assert_eq!(
            (got, answer["error"]["field"].as_str()),
            (status, Some(field)),
            "{request}: {answer}"
        );
    }

    let (status, job) = api
        .post(
            "/v1/tasks/cancel",
            json!({"tenant_id": "clinic-1", "destination_id": "crm"}),
        )
        .await;
    assert_eq!(status, 202, "{job}");
    assert_eq!(job["action"], "cancel");
    assert_eq!(job["region"], "eu");
    assert_eq!(job["filter"]["tenant_id"], "clinic-1");
    assert_eq!(job["filter"]["reason"], Value::Null);
    assert_eq!(job["horizon_seconds"], Value::Null);
    assert_eq!(job["requested_by"], "bootstrap");
    let id = job["id"].as_str().unwrap().to_owned();

    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let finished = loop {
        let (status, now) = api.get(&format!("/v1/replays/{id}")).await;
        assert_eq!(status, 200, "{now}");
        assert_eq!(now["action"], "cancel");
        if now["state"] == "finished" {
            break now;
        }
        assert_eq!(now["state"], "running");
        assert!(std::time::Instant::now() < deadline, "not finished: {now}");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        (&finished["cancelled"], &finished["replayed"]),
        (&json!(2), &json!(0))
    );
    assert!(finished["finished_at"].is_string());
    for id in &ids[..2] {
        let (status, task) = api.get(&format!("/v1/tasks/{}", id.0)).await;
        assert_eq!(
            (status, &task["state"], &task["cancelled"]["by"]),
            (200, &json!("cancelled"), &json!("bootstrap")),
            "{task}"
        );
    }
    let (status, other) = api.get(&format!("/v1/tasks/{}", ids[2].0)).await;
    assert_eq!(
        (status, &other["state"]),
        (200, &json!("pending")),
        "another tenant's task is left alone"
    );

    // A replay's job shows its action too.
    let (status, replay) = api
        .post("/v1/tasks/replay", json!({"destination_id": "crm"}))
        .await;
    assert_eq!(status, 202, "{replay}");
    assert_eq!(
        (&replay["action"], &replay["cancelled"]),
        (&json!("replay"), &json!(0))
    );
    assert!(replay["horizon_seconds"].is_i64(), "{replay}");
    runtime.shutdown().await;
}
