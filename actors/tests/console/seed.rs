//! What the scenarios put in the store before a browser looks: destinations
//! pointing at the test receiver and tasks of named tenants, written with
//! the store itself, then delivered (or not) by the real runtime.

use remit::store::{Destinations, Schedule};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use remit::domain::{
    DestinationId, NewDestination, NewTask, Payload, ReminderId, Task, TaskId, TaskState, TenantId,
};

use crate::server::REGION;
use crate::support::TestDb;

/// Text inside every payload: health data, which no page may show.
pub const PAYLOAD_MARKER: &str = "dob-1961-04-12";

/// A signing secret in the Standard Webhooks form.
pub const SECRET: &str = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=";

/// A destination of the console's region sending to `url`.
pub async fn destination(db: &TestDb, id: &str, url: &str) -> DestinationId {
    let id = DestinationId::new(id).unwrap();
    let new = NewDestination::new(id.clone(), REGION, url, Some(SECRET.to_owned())).unwrap();
    db.store.add_destination(new).await.unwrap();
    id
}

/// A task of `tenant` for `destination`, due at `not_before`.
pub async fn task_at(
    db: &TestDb,
    tenant: &str,
    reminder: &str,
    destination: &DestinationId,
    not_before: DateTime<Utc>,
) -> TaskId {
    let new = NewTask {
        tenant_id: TenantId::new(tenant).unwrap(),
        reminder_id: ReminderId::new(reminder).unwrap(),
        destination_id: destination.clone(),
        region: REGION,
        not_before,
        retry_horizon: chrono::Duration::days(1),
        payload: Payload::json(format!(
            r#"{{"reminder":"{reminder}","dob":"{PAYLOAD_MARKER}"}}"#
        )),
        ordering_key: None,
        traceparent: None,
    };
    db.store.schedule(new).await.unwrap().task.id
}

/// A task of `tenant` for `destination`, due now.
pub async fn task(
    db: &TestDb,
    tenant: &str,
    reminder: &str,
    destination: &DestinationId,
) -> TaskId {
    task_at(db, tenant, reminder, destination, Utc::now()).await
}

pub async fn task_row(db: &TestDb, id: TaskId) -> Task {
    db.store
        .task(id)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("task {id:?} is gone"))
}

/// Waits until every task in `ids` is in `state`, or fails naming those
/// that are not.
pub async fn wait_for_state(db: &TestDb, ids: &[TaskId], state: TaskState, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let mut elsewhere = Vec::new();
        for id in ids {
            let row = task_row(db, *id).await;
            if row.state != state {
                elsewhere.push((row.reminder_id.as_str().to_owned(), row.state));
            }
        }
        if elsewhere.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not {state:?} after {within:?}: {elsewhere:?}"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}
