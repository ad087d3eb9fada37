//! Webhooks are signed per Standard Webhooks, checked here by an
//! implementation written from the specification, not by remit's code.

use std::time::Duration;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use remit::domain::{Region, TaskState};
use sha2::Sha256;

use crate::support::{self, Receiver, TestDb};

/// Verifies a webhook as a receiver would: the secret after `whsec_` is
/// base64; the signed content is `id.timestamp.body`; the header holds
/// space-separated `v1,<base64>` signatures.
pub fn verify(secret: &str, id: &str, timestamp: &str, body: &[u8], header: &str) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap();
    let mut signed = format!("{id}.{timestamp}.").into_bytes();
    signed.extend_from_slice(body);
    header
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .any(|sig| {
            let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
            mac.update(&signed);
            let expected = base64::engine::general_purpose::STANDARD
                .decode(sig)
                .unwrap_or_default();
            mac.verify_slice(&expected).is_ok()
        })
}

#[actix_rt::test]
async fn signed_webhooks_verify_and_carry_the_standard_headers() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let secret = remit_actors::signature::generate_secret();
    let signed = support::destination(
        &db,
        "signed",
        Region::US,
        &receiver.url("/signed"),
        Some(&secret),
    )
    .await;
    let plain = support::destination(&db, "plain", Region::US, &receiver.url("/plain"), None).await;
    let tasks = vec![
        support::task(&db, "s1", &signed, Region::US).await,
        support::task(&db, "p1", &plain, Region::US).await,
    ];
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &db.store).await;
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;

    let request = &receiver.requests_to("/signed")[0];
    let id = request.header("webhook-id").unwrap();
    let timestamp = request.header("webhook-timestamp").unwrap();
    let signature = request.header("webhook-signature").unwrap();
    assert!(verify(&secret, id, timestamp, &request.body, signature));
    assert!(!verify(
        &secret,
        id,
        timestamp,
        b"{\"tampered\":true}",
        signature
    ));
    assert_eq!(request.header("idempotency-key"), Some(id));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.header("user-agent"),
        Some(remit_actors::runtime::USER_AGENT)
    );
    assert_eq!(request.body, br#"{"reminder":"s1"}"#);
    let age = chrono::Utc::now().timestamp() - timestamp.parse::<i64>().unwrap();
    assert!((0..60).contains(&age));

    let unsigned = &receiver.requests_to("/plain")[0];
    assert!(unsigned.header("webhook-signature").is_none());
    assert!(unsigned.header("webhook-id").is_some());
}
