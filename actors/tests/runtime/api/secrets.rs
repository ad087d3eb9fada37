//! Rotating a destination's signing secret through the API, checked by
//! the public Standard Webhooks library before, during and after the
//! overlap, on both stores.

use std::time::Duration;

use remit::domain::Region;
use serde_json::{json, Value};

use super::client::Api;
use crate::support::standard_webhooks::verify;
use crate::support::{self, Backend, Received, Receiver, TestDb};

fn task_body(reminder: &str) -> Value {
    json!({
        "tenant_id": "clinic-1",
        "reminder_id": reminder,
        "destination_id": "crm",
        "region": "eu",
        "not_before": chrono::Utc::now().to_rfc3339(),
        "payload": {"reminder": reminder},
    })
}

/// Schedules `reminder` and answers the request it arrives as.
async fn delivered(api: &Api, receiver: &Receiver, reminder: &str) -> Received {
    let (status, body) = api.post("/v1/tasks", task_body(reminder)).await;
    assert_eq!(status, 201, "{body}");
    let body = format!(r#"{{"reminder":"{reminder}"}}"#).into_bytes();
    let arrived = |log: &[Received]| log.iter().any(|r| r.body == body);
    receiver
        .wait_until(Duration::from_secs(10), reminder, arrived)
        .await;
    let log = receiver.requests_to("/hook");
    log.into_iter().find(|r| r.body == body).unwrap()
}

fn signatures(request: &Received) -> usize {
    request
        .header("webhook-signature")
        .unwrap_or_default()
        .split(' ')
        .filter(|s| s.starts_with("v1,"))
        .count()
}

async fn a_rotation_signs_with_every_valid_secret(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let first = remit_actors::signature::generate_secret();
    let (status, body) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/hook"), "secret": first}),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    // Before: one secret, one signature.
    let before = delivered(&api, &receiver, "before").await;
    assert_eq!(signatures(&before), 1);
    assert_eq!(verify(&[(&first, &before)]), [Ok(())]);

    // A rotation with `{}`: remit makes the secret up and shows it once.
    let (status, rotated) = api.post("/v1/destinations/crm/secrets", json!({})).await;
    assert_eq!(status, 201, "{rotated}");
    let second = rotated["secret"].as_str().unwrap().to_owned();
    assert!(second.starts_with("whsec_") && second != first);
    assert_eq!(rotated["expires_at"], Value::Null);
    let (status, listed) = api.get("/v1/destinations/crm/secrets").await;
    assert_eq!(status, 200);
    let listed = listed["secrets"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[1]["id"], rotated["id"]);
    let old_ends: chrono::DateTime<chrono::Utc> =
        listed[0]["expires_at"].as_str().unwrap().parse().unwrap();
    let overlap = old_ends - chrono::Utc::now();
    assert!(
        overlap > chrono::Duration::hours(23) && overlap <= chrono::Duration::hours(24),
        "a day of overlap by default: {overlap}"
    );
    assert!(
        !listed.iter().any(|s| s.to_string().contains("whsec_")),
        "a list never shows a value"
    );

    // During: a signature per valid secret, each verifies on its own.
    let during = delivered(&api, &receiver, "during").await;
    assert_eq!(signatures(&during), 2);
    assert_eq!(
        verify(&[(&first, &during), (&second, &during)]),
        [Ok(()), Ok(())]
    );

    // The caller's own secret, ending the old ones at once: after the
    // overlap only the newest signs, and the older secrets no longer verify.
    let third = remit_actors::signature::generate_secret();
    let (status, rotated) = api
        .post(
            "/v1/destinations/crm/secrets",
            json!({"secret": third, "old_expires_at": chrono::Utc::now().to_rfc3339()}),
        )
        .await;
    assert_eq!(status, 201, "{rotated}");
    assert!(
        rotated.get("secret").is_none(),
        "a given secret is not echoed"
    );
    let after = delivered(&api, &receiver, "after").await;
    assert_eq!(signatures(&after), 1);
    let checked = verify(&[(&third, &after), (&first, &after), (&second, &after)]);
    assert_eq!(checked[0], Ok(()));
    assert!(checked[1].is_err() && checked[2].is_err(), "{checked:?}");

    // Refusals name the field and never echo a secret.
    let (status, body) = api
        .post(
            "/v1/destinations/crm/secrets",
            json!({"secret": "whsec_tooshort"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (422, Some("secret"))
    );
    assert!(!body.to_string().contains("tooshort"));
    let (status, body) = api
        .post(
            "/v1/destinations/crm/secrets",
            json!({"old_expires_at": "2020-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (422, Some("old_expires_at"))
    );
    let (status, _) = api.post("/v1/destinations/gone/secrets", json!({})).await;
    assert_eq!(status, 404);
    let (status, _) = api.get("/v1/destinations/gone/secrets").await;
    assert_eq!(status, 404);
    assert_eq!(
        api.get("/v1/destinations/crm/secrets").await.1["secrets"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "refusals wrote nothing"
    );
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn postgres_rotation_signs_with_every_valid_secret() {
    a_rotation_signs_with_every_valid_secret(Backend::Postgres).await;
}

#[actix_rt::test]
async fn sqlite_rotation_signs_with_every_valid_secret() {
    a_rotation_signs_with_every_valid_secret(Backend::Sqlite).await;
}
