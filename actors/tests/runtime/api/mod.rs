//! The HTTP API: auth, idempotent scheduling, conflicts, field-named
//! errors, task inspection and replay.

mod audit;
mod batch;
mod bulk_cancel;
pub(crate) mod client;
mod contract;
mod destination_settings;
mod destination_stats;
mod disable;
mod failures;
mod front_door;
mod openapi;
mod ordering;
pub(crate) mod path_variants;
mod regions;
mod replays;
mod revivals;
mod routing;
mod scopes;
mod secrets;
mod task_changes;
mod tokens;

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{Region, TaskState};
use serde_json::{json, Value};

use crate::support::{self, Receiver, Reply, TestDb};
use client::Api;

/// A valid request to schedule `reminder` for the eu destination.
fn task_body(receiver_dest: &str, reminder: &str) -> Value {
    json!({
        "tenant_id": "clinic-1",
        "reminder_id": reminder,
        "destination_id": receiver_dest,
        "region": "eu",
        "not_before": chrono::Utc::now().to_rfc3339(),
        "payload": {"reminder": reminder, "renewal": "2026-09-01"},
    })
}

#[actix_rt::test]
async fn the_api_schedules_inspects_and_replays() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    // The receiver refuses the first webhook for good (410), then accepts.
    receiver.script("/hook", vec![Reply::status(410)], Reply::ok());
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);

    // Auth is required on /v1, not on the probes.
    let (status, _) = api.call("GET", "/v1/destinations/crm", None, None).await;
    assert_eq!(status, 401);
    let (status, _) = api
        .call("GET", "/v1/destinations/crm", Some("wrong"), None)
        .await;
    assert_eq!(status, 401);
    assert_eq!(api.call("GET", "/healthz", None, None).await.0, 200);
    let (status, ready) = api.call("GET", "/readyz", None, None).await;
    assert_eq!(
        (status, ready),
        (
            200,
            json!({"database": true, "supervisor": true, "progress": true, "stuck": null})
        )
    );

    // Destinations.
    let (status, body) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/hook")}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    // The same registration again is a repeat, answered as one.
    let (status, again) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/hook")}),
        )
        .await;
    assert_eq!((status, &again), (200, &body));
    let (status, body) = api
        .post(
            "/v1/destinations",
            json!({"id": "bad", "region": "eu", "url": "ftp://x", "secret": "nope"}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["field"], "secret");
    let (status, body) = api.get("/v1/destinations/crm").await;
    assert_eq!(status, 200);
    assert_eq!(body["has_signing_secret"], false);

    // Scheduling is idempotent.
    let (status, created) = api.post("/v1/tasks", task_body("crm", "r1")).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["state"], "pending");
    let mut again = task_body("crm", "r1");
    again["not_before"] = json!(db_not_before(&db, &created).await);
    let (status, repeated) = api.post("/v1/tasks", again).await;
    assert_eq!(status, 200, "{repeated}");
    assert_eq!(repeated["id"], created["id"]);
    assert_eq!(repeated["idempotency_key"], created["idempotency_key"]);

    // Same ids, other content.
    let mut changed = task_body("crm", "r1");
    changed["payload"] = json!({"reminder": "hba1c-7.2"});
    let (status, body) = api.post("/v1/tasks", changed).await;
    assert_eq!(status, 409, "{body}");
    assert!(!body.to_string().contains("hba1c"), "no payload in errors");

    // Field-named errors.
    let mut cases = vec![];
    let mut bad_time = task_body("crm", "r2");
    bad_time["not_before"] = json!("tomorrow");
    cases.push((bad_time, 422, "not_before"));
    let mut other_region = task_body("crm", "r3");
    other_region["region"] = json!("us");
    cases.push((other_region, 422, "region"));
    let mut unknown_region = task_body("crm", "r4");
    unknown_region["region"] = json!("APAC");
    cases.push((unknown_region, 422, "region"));
    cases.push((task_body("nowhere", "r5"), 422, "destination_id"));
    let mut empty_tenant = task_body("crm", "r6");
    empty_tenant["tenant_id"] = json!("");
    cases.push((empty_tenant, 422, "tenant_id"));
    let mut missing = task_body("crm", "r7");
    missing.as_object_mut().unwrap().remove("not_before");
    cases.push((missing, 400, "not_before"));
    for (body, status, field) in cases {
        let (got, error) = api.post("/v1/tasks", body).await;
        assert_eq!(
            (got, error["error"]["field"].as_str()),
            (status, Some(field)),
            "{error}"
        );
    }

    // The first attempt fails for good (410); replay sends it again.
    let id = created["id"].as_str().unwrap().to_owned();
    let task_id = remit::domain::TaskId(id.parse().unwrap());
    support::wait_for_state(&db, &[task_id], TaskState::Failed, Duration::from_secs(10)).await;
    let (status, task) = api.get(&format!("/v1/tasks/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(task["failure_reason"], "http_410");
    assert_eq!(task["attempts"][0]["http_status"], 410);
    assert!(task.get("payload").is_none());
    let (status, replayed) = api.post(&format!("/v1/tasks/{id}/replay"), json!({})).await;
    assert_eq!(status, 200, "{replayed}");
    assert_eq!(replayed["state"], "pending");
    assert_eq!(
        replayed["attempts"][0]["http_status"], 410,
        "the log so far"
    );
    support::wait_for_state(
        &db,
        &[task_id],
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    let (status, _) = api.post(&format!("/v1/tasks/{id}/replay"), json!({})).await;
    assert_eq!(status, 409, "only failed tasks can be replayed");
    let (status, _) = api
        .get("/v1/tasks/00000000-0000-0000-0000-000000000000")
        .await;
    assert_eq!(status, 404);

    let mut metrics = api
        .client
        .get(format!("{}/metrics", api.base))
        .send()
        .await
        .unwrap();
    let metrics = String::from_utf8(metrics.body().await.unwrap().to_vec()).unwrap();
    // Per destination and outcome, and terminal failures by reason; the
    // queue gauges are there from the first refresh.
    assert!(
        metrics.contains(r#"outcome="delivered"} 1"#)
            && metrics.contains("remit_attempts_total{region=\"eu\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("remit_terminal_failures_total{region=\"eu\""),
        "{metrics}"
    );
    assert!(
        metrics.contains("remit_oldest_eligible_age_seconds{region=\"eu\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("remit_deadline_to_delivery_seconds_bucket"),
        "{metrics}"
    );
    assert!(
        !metrics.contains("clinic"),
        "no tenant ids in labels: {metrics}"
    );

    runtime.shutdown().await;
    let keys: Vec<_> = receiver
        .requests()
        .iter()
        .map(|r| r.header("idempotency-key").unwrap().to_owned())
        .collect();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1], "the replay carries the same key");
}

/// The task's stored `not_before`, so a repeat sends exactly the same
/// request.
async fn db_not_before(db: &TestDb, created: &Value) -> String {
    let id = remit::domain::TaskId(created["id"].as_str().unwrap().parse().unwrap());
    db.store
        .task(id)
        .await
        .unwrap()
        .unwrap()
        .not_before
        .to_rfc3339()
}
