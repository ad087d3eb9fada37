//! A reminder's life through the API, on both stores: cancel, reschedule
//! and erase by id and by tenant and reminder, PUT a reminder (created,
//! unchanged, moved), list tasks and destinations a page at a time, bring
//! a fixed receiver's retries forward, erase a tenant; each refusal names
//! its field, and a token limited to another tenant sees none of it.

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{Region, TaskId, TaskState};
use serde_json::{json, Value};

use super::client::Api;
use super::scopes::{grant, stored};
use crate::support::{self, Backend, Receiver, Reply, TestDb};

fn tomorrow() -> String {
    (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339()
}

fn body(reminder: &str, destination: &str, not_before: &str) -> Value {
    json!({
        "tenant_id": "clinic-1", "reminder_id": reminder, "destination_id": destination,
        "region": "eu", "not_before": not_before, "payload": {"reminder": reminder},
    })
}

fn id_of(task: &Value) -> TaskId {
    TaskId(task["id"].as_str().unwrap().parse().unwrap())
}

#[actix_rt::test]
async fn a_reminders_whole_life_through_the_api_on_postgres() {
    a_reminders_whole_life(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_reminders_whole_life_through_the_api_on_sqlite() {
    a_reminders_whole_life(Backend::Sqlite).await;
}

async fn a_reminders_whole_life(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/flaky", vec![Reply::status(503)], Reply::ok());
    let mut config = support::config(&db, Region::EU, "eu-1");
    // A retry waits an hour unless brought forward.
    config.retry.backoff_base_ms = 3_600_000;
    config.retry.backoff_cap_seconds = 3_600;
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    for (id, path) in [("crm", "/hook"), ("flaky", "/flaky")] {
        let (status, answer) = api
            .post(
                "/v1/destinations",
                json!({"id": id, "region": "eu", "url": receiver.url(path)}),
            )
            .await;
        assert_eq!(status, 201, "{answer}");
    }
    let mut tasks = Vec::new();
    for reminder in ["r1", "r2", "r3"] {
        let (status, task) = api
            .post("/v1/tasks", body(reminder, "crm", &tomorrow()))
            .await;
        assert_eq!(status, 201, "{task}");
        tasks.push(task);
    }

    // Cancel by id, then again: a repeat.
    let r1 = tasks[0]["id"].as_str().unwrap().to_owned();
    let (status, answer) = api
        .post(&format!("/v1/tasks/{r1}/cancel"), json!(null))
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("cancelled")),
        "{answer}"
    );
    assert_eq!(answer["task"]["state"], "cancelled");
    assert_eq!(answer["task"]["cancelled"]["by"], "bootstrap");
    let (status, answer) = api
        .post(&format!("/v1/tasks/{r1}/cancel"), json!(null))
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("already_cancelled"))
    );

    // Refusals name the field; another tenant's token sees nothing.
    let r2 = "/v1/tenants/clinic-1/reminders/r2";
    for (request, status, field) in [
        (json!({"not_before": "soon"}), 422, json!("not_before")),
        (
            json!({"not_before": tomorrow(), "colour": 1}),
            400,
            json!("colour"),
        ),
    ] {
        let (got, answer) = api.post(&format!("{r2}/reschedule"), request).await;
        assert_eq!(
            (got, answer["error"]["field"].clone()),
            (status, field),
            "{answer}"
        );
    }
    let (_, other) = stored(&db, grant("schedule", &["clinic-2"])).await;
    let (status, _) = api
        .call("POST", &format!("{r2}/cancel"), Some(&other), None)
        .await;
    assert_eq!(status, 404);
    let (status, list) = api.call("GET", "/v1/tasks", Some(&other), None).await;
    assert_eq!((status, list["tasks"].clone()), (200, json!([])));

    // Moved to now by tenant and reminder: sent, with its key.
    let now = chrono::Utc::now().to_rfc3339();
    let (status, answer) = api
        .post(&format!("{r2}/reschedule"), json!({"not_before": now}))
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("moved")),
        "{answer}"
    );
    let r2_id = id_of(&tasks[1]);
    support::wait_for_state(&db, &[r2_id], TaskState::Delivered, Duration::from_secs(10)).await;
    let sent = receiver.requests_to("/hook");
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].header("idempotency-key"),
        tasks[1]["idempotency_key"].as_str()
    );
    // A delivered task is neither cancelled nor moved.
    for (action, request) in [
        ("cancel", json!(null)),
        ("reschedule", json!({"not_before": now})),
    ] {
        let (status, answer) = api.post(&format!("{r2}/{action}"), request).await;
        assert_eq!(status, 409, "{action}: {answer}");
    }

    // Erased: the payload goes, the task is cancelled, the record stays.
    let r3 = tasks[2]["id"].as_str().unwrap();
    let (status, answer) = api
        .post(&format!("/v1/tasks/{r3}/erase"), json!(null))
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("erased")),
        "{answer}"
    );
    assert_eq!(answer["task"]["state"], "cancelled");
    assert!(answer["task"]["payload_erased_at"].is_string());

    // PUT: created, then unchanged, then moved.
    let r4 = "/v1/tenants/clinic-1/reminders/r4";
    let later = tomorrow();
    let put = json!({"destination_id": "crm", "region": "eu", "not_before": later,
                     "payload": {"renewal": "2026-10-15"}});
    let (status, answer) = api
        .call("PUT", r4, Some(support::API_TOKEN), Some(put.clone()))
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (201, json!("created")),
        "{answer}"
    );
    let (status, answer) = api
        .call("PUT", r4, Some(support::API_TOKEN), Some(put.clone()))
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("unchanged")),
        "{answer}"
    );
    let mut changed = put.clone();
    changed["payload"] = json!({"renewal": "2026-11-15"});
    let (status, answer) = api
        .call("PUT", r4, Some(support::API_TOKEN), Some(changed))
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("moved")),
        "{answer}"
    );
    let mut elsewhere = put.clone();
    elsewhere["destination_id"] = json!("flaky");
    let (status, answer) = api
        .call("PUT", r4, Some(support::API_TOKEN), Some(elsewhere))
        .await;
    assert_eq!(status, 409, "{answer}");

    // Lists, a page at a time; a bad parameter is named.
    let (status, page) = api.get("/v1/tasks?tenant_id=clinic-1&limit=2").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["tasks"].as_array().unwrap().len(), 2);
    let next = page["next"].as_str().unwrap();
    let (_, rest) = api
        .get(&format!(
            "/v1/tasks?tenant_id=clinic-1&limit=2&before={next}"
        ))
        .await;
    assert_eq!(rest["tasks"].as_array().unwrap().len(), 2, "{rest}");
    let (_, cancelled) = api.get("/v1/tasks?state=cancelled").await;
    assert_eq!(
        cancelled["tasks"].as_array().unwrap().len(),
        2,
        "{cancelled}"
    );
    for (query, field) in [
        ("state=sent", "state"),
        ("limit=0", "limit"),
        ("from=x", "from"),
    ] {
        let (status, answer) = api.get(&format!("/v1/tasks?{query}")).await;
        assert_eq!(
            (status, answer["error"]["field"].clone()),
            (422, json!(field)),
            "{query}"
        );
    }
    let (status, answer) = api.get("/v1/tasks?colour=red").await;
    assert_eq!(status, 400, "{answer}");
    let (_, page) = api.get("/v1/destinations?limit=1").await;
    assert_eq!(page["destinations"][0]["id"], "crm");
    assert_eq!(page["next"], "crm");
    let (_, rest) = api.get("/v1/destinations?limit=1&after=crm").await;
    assert_eq!(rest["destinations"][0]["id"], "flaky");
    assert_eq!(rest["next"], json!(null));

    // A fixed receiver's retries come forward instead of waiting an hour.
    let (_, flaky) = api.post("/v1/tasks", body("f1", "flaky", &now)).await;
    let f1 = id_of(&flaky);
    support::wait_for_state(&db, &[f1], TaskState::RetryWait, Duration::from_secs(10)).await;
    let (status, answer) = api
        .post("/v1/destinations/flaky/retry-now", json!(null))
        .await;
    assert_eq!(
        (status, answer["moved"].clone()),
        (200, json!(1)),
        "{answer}"
    );
    support::wait_for_state(&db, &[f1], TaskState::Delivered, Duration::from_secs(10)).await;
    let f1_task = db.store.task(f1).await.unwrap().unwrap();
    assert_eq!(f1_task.attempt_count, 2, "its count kept");

    // A tenant's erasure: every payload, the live ones cancelled.
    let (status, answer) = api.post("/v1/tenants/clinic-1/erase", json!(null)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["erased"], 4,
        "r1, r2, r4 and f1 (r3 was erased before): {answer}"
    );
    assert_eq!(answer["cancelled"], 1, "r4; r1 had ended already: {answer}");

    let series = runtime.stats().metrics.encode();
    for line in [
        r#"remit_tasks_cancelled_total{region="eu"} 2"#,
        r#"remit_payloads_erased_total{region="eu"} 5"#,
        r#"remit_tasks_rescheduled_total{region="eu"} 2"#,
    ] {
        assert!(series.contains(line), "no {line}:\n{series}");
    }
    runtime.shutdown().await;
}
