//! The API's front door: the token is checked before the body is read, a
//! body over the limit is 413, and a payload is kept byte for byte.

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{Region, TaskId, MAX_PAYLOAD_BYTES};
use serde_json::json;

use super::client::Api;
use super::task_body;
use crate::support::{self, Receiver, TestDb, API_TOKEN};

#[actix_rt::test]
async fn without_the_token_the_body_is_never_read() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);

    let (status, refused) = api.call("GET", "/v1/destinations/crm", None, None).await;
    assert_eq!(status, 401);
    let expected = json!({"error": {
        "code": "unauthorized", "field": null, "message": "missing or wrong bearer token"
    }});
    assert_eq!(refused, expected);

    // Garbage, wrong types, missing fields: every answer is the same 401,
    // with no field name and no parse error in it.
    let bodies: [&[u8]; 4] = [
        b"\x00\xffnot json at all",
        br#"{"tenant_id": 5, "unknown": true}"#,
        b"{}",
        br#"{"payload": {"a": 1"#,
    ];
    let paths = [
        "/v1/tasks",
        "/v1/destinations",
        "/v1/tasks/00000000-0000-0000-0000-000000000000/replay",
    ];
    for path in paths {
        for body in bodies {
            for token in [None, Some("wrong"), Some("")] {
                let answer = api.raw(path, token, body.to_vec()).await;
                assert_eq!(answer, (401, expected.clone()), "{path} {token:?}");
            }
        }
    }
    // A body over the limit is refused for the token too, not measured.
    let huge = vec![b'x'; MAX_PAYLOAD_BYTES + 128 * 1024];
    assert_eq!(api.raw("/v1/tasks", None, huge).await.0, 401);

    // With the token the same garbage is read, and the answer names the
    // field.
    let (status, answer) = api
        .raw("/v1/tasks", Some(API_TOKEN), bodies[1].to_vec())
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"]["field"].is_string(), "{answer}");
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn bodies_and_payloads_over_the_limit_are_413() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);

    // The whole body over the limit: refused before it is parsed.
    let mut huge = task_body("crm", "huge");
    huge["payload"] = json!("x".repeat(MAX_PAYLOAD_BYTES + 128 * 1024));
    let (status, answer) = api
        .raw(
            "/v1/tasks",
            Some(API_TOKEN),
            serde_json::to_vec(&huge).unwrap(),
        )
        .await;
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["error"]["code"], "too_large");
    assert_eq!(answer["error"]["field"], json!(null));
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("at most"), "{message}");

    // A body within the limit whose payload is over its own.
    let mut big = task_body("crm", "big");
    big["payload"] = json!("x".repeat(MAX_PAYLOAD_BYTES));
    let (status, answer) = api.post("/v1/tasks", big).await;
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["error"]["code"], "too_large");
    assert_eq!(answer["error"]["field"], "payload");
    assert_eq!(
        answer["error"]["message"],
        format!("payload must be at most {MAX_PAYLOAD_BYTES} bytes")
    );
    assert!(!answer.to_string().contains("xxxx"), "no payload in errors");
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn the_payload_is_stored_and_sent_byte_for_byte() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;

    // Keys out of order, a number no f64 holds, an exponent and spacing: a
    // round trip through serde_json::Value would change every one.
    let payload = r#"{"z":1,"a":{"y":2,"b":3},"big":123456789012345678901234567890, "e": 1.0e2}"#;
    let body = format!(
        r#"{{"tenant_id":"clinic-1","reminder_id":"raw","destination_id":"crm","region":"eu","not_before":"{}","payload":{payload}}}"#,
        chrono::Utc::now().to_rfc3339()
    );
    let (status, created) = api
        .raw("/v1/tasks", Some(API_TOKEN), body.into_bytes())
        .await;
    assert_eq!(status, 201, "{created}");

    let id = TaskId(created["id"].as_str().unwrap().parse().unwrap());
    let task = db.store.task(id).await.unwrap().unwrap();
    let stored = db.store.payload(&task).await.unwrap();
    assert_eq!(String::from_utf8(stored.body).unwrap(), payload);

    receiver
        .wait_until(Duration::from_secs(10), "the webhook", |r| !r.is_empty())
        .await;
    let sent = receiver.requests().remove(0).body;
    assert_eq!(String::from_utf8(sent).unwrap(), payload);
    runtime.shutdown().await;
}
