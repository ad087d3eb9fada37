//! Bringing an ended task back with a fresh attempt budget is a replay by
//! another name: through `POST /v1/tasks/{id}/reschedule` or `PUT
//! /v1/tenants/{t}/reminders/{r}` it takes the admin scope replay takes
//! (403 for a schedule token, the task as it was), and it is never done
//! for a task of a deleted destination, whose id then registers again at
//! once.

use remit::domain::{Region, TaskState};
use remit::store::Schedule;
use serde_json::{json, Value};

use super::client::Api;
use super::scopes::{grant, stored};
use crate::support::{self, Receiver, TestDb};

fn tomorrow() -> String {
    (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339()
}

fn body(reminder: &str) -> Value {
    json!({
        "tenant_id": "clinic-1", "reminder_id": reminder, "destination_id": "crm",
        "region": "eu", "not_before": tomorrow(), "payload": {"reminder": reminder},
    })
}

#[actix_rt::test]
async fn only_an_admin_brings_an_ended_task_back_and_never_a_deleted_destinations() {
    let db = TestDb::new().await;
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
    let (_, task) = api.post("/v1/tasks", body("r1")).await;
    let id = task["id"].as_str().unwrap().to_owned();
    let (status, _) = api
        .post(&format!("/v1/tasks/{id}/cancel"), json!(null))
        .await;
    assert_eq!(status, 200);
    let before = db
        .store
        .task(id.parse().map(remit::domain::TaskId).unwrap())
        .await;
    let before = before.unwrap().unwrap();

    // A schedule token for the tenant: refused, nothing written.
    let (_, schedule) = stored(&db, grant("schedule", &["clinic-1"])).await;
    let move_to = json!({"not_before": tomorrow()});
    let (status, refused) = api
        .call(
            "POST",
            &format!("/v1/tasks/{id}/reschedule"),
            Some(&schedule),
            Some(move_to.clone()),
        )
        .await;
    assert_eq!(status, 403, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("cancelled") && message.contains("admin"),
        "{message}"
    );
    let put = json!({
        "destination_id": "crm", "region": "eu", "not_before": tomorrow(),
        "payload": {"reminder": "r1", "again": true},
    });
    let (status, refused) = api
        .call(
            "PUT",
            "/v1/tenants/clinic-1/reminders/r1",
            Some(&schedule),
            Some(put.clone()),
        )
        .await;
    assert_eq!(status, 403, "{refused}");
    let after = db.store.task(before.id).await.unwrap().unwrap();
    assert_eq!(after, before, "nothing written");

    // An admin brings it back, as a replay would.
    let (status, moved) = api
        .post(&format!("/v1/tasks/{id}/reschedule"), move_to.clone())
        .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["task"]["state"], json!("pending"));

    // Cancelled again, its destination deleted: nobody brings it back, and
    // the message says why.
    api.post(&format!("/v1/tasks/{id}/cancel"), json!(null))
        .await;
    let (status, deleted) = api.delete("/v1/destinations/crm").await;
    assert!(status < 300, "{status} {deleted}");
    let (status, refused) = api
        .post(&format!("/v1/tasks/{id}/reschedule"), move_to)
        .await;
    assert_eq!(status, 409, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("was deleted"), "{message}");
    // Put again, it is refused as a reminder of a destination not there.
    let (status, refused) = api
        .call(
            "PUT",
            "/v1/tenants/clinic-1/reminders/r1",
            Some(support::API_TOKEN),
            Some(put),
        )
        .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["error"]["field"],
        json!("destination_id"),
        "{refused}"
    );
    assert_eq!(
        db.store.task(before.id).await.unwrap().unwrap().state,
        TaskState::Cancelled
    );
    // Its id registers again at once: none of its tasks is live.
    let (status, answer) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/hook")}),
        )
        .await;
    assert_eq!(status, 201, "{answer}");
    runtime.shutdown().await;
}
