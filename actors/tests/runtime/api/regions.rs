//! A region's API reads, reports and replays only its own region's tasks
//! and destinations; another region's are answered like missing ones.

use remit::domain::{FailureReason, Region, TaskId, TaskState};
use remit::store::{Destinations, Leases, Schedule};
use serde_json::{json, Value};

use super::client::Api;
use super::task_body;
use crate::support::{self, TestDb};

fn not_found(message: String) -> (u16, Value) {
    (
        404,
        json!({"error": {"code": "not_found", "field": null, "message": message}}),
    )
}

#[actix_rt::test]
async fn another_regions_tasks_and_destinations_are_not_found() {
    let db = TestDb::with_database_clock().await;
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.allow_other_regions = true;
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    support::destination(&db, "crm-us", Region::US, "http://127.0.0.1:9/", None).await;

    // Accepted for the us processes to send...
    let mut body = task_body("crm-us", "r1");
    body["region"] = json!("us");
    let (status, created) = api.post("/v1/tasks", body).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();

    // ...but not readable here: the same answer as an id that never was.
    let missing = "00000000-0000-0000-0000-000000000000";
    assert_eq!(
        api.get(&format!("/v1/tasks/{missing}")).await,
        not_found(format!("no task with id {missing}"))
    );
    assert_eq!(
        api.get(&format!("/v1/tasks/{id}")).await,
        not_found(format!("no task with id {id}"))
    );

    // Nor replayable once it has failed in its own region.
    let task_id = TaskId(id.parse().unwrap());
    let claimed = db.claim(Region::US, "us-1", 1).await;
    assert_eq!(claimed.len(), 1);
    db.store
        .fail(
            &claimed[0].lease(),
            &FailureReason::MaxAttempts,
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        api.post(&format!("/v1/tasks/{id}/replay"), json!({})).await,
        not_found(format!("no task with id {id}"))
    );
    assert_eq!(
        api.post(&format!("/v1/tasks/{missing}/replay"), json!({}))
            .await,
        not_found(format!("no task with id {missing}"))
    );
    let task = db.store.task(task_id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::Failed, "left as it was");

    // Destinations likewise.
    assert_eq!(
        api.get("/v1/destinations/nowhere").await,
        not_found("no destination \"nowhere\"".into())
    );
    assert_eq!(
        api.get("/v1/destinations/crm-us").await,
        not_found("no destination \"crm-us\"".into())
    );
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn another_regions_destination_is_refused_without_allow_other_regions() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &db.store).await;
    let api = Api::new(&runtime);

    let body = json!({"id": "crm-eu", "region": "eu", "url": "https://hooks.example.com/in"});
    let (status, answer) = api.post("/v1/destinations", body).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["error"]["field"], "region", "{answer}");
    let id = remit::domain::DestinationId::new("crm-eu").unwrap();
    assert!(
        db.store.destination(&id).await.unwrap().is_none(),
        "nothing written"
    );
    runtime.shutdown().await;

    // With allow_other_regions, the us API registers it for the eu processes.
    let mut config = support::config(&db, Region::US, "us-2");
    config.allow_other_regions = true;
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    let body = json!({"id": "crm-eu", "region": "eu", "url": "https://hooks.example.com/in"});
    let (status, answer) = api.post("/v1/destinations", body).await;
    assert_eq!(status, 201, "{answer}");
    runtime.shutdown().await;
}
