//! A ring of payload keys: the newest seals, any opens; a ring that holds
//! every recorded key passes the start-up check and records its newest
//! (a rotation); one that lacks a recorded key is refused, naming it.

use base64::Engine as _;
use remit::domain::Region;
use remit::payload_crypto::PayloadKey;
use remit::store::{Store, StoreError};

use crate::support::{new_task, Backend, TestDb};

fn text(byte: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

fn ring(bytes: &[u8]) -> PayloadKey {
    let texts: Vec<String> = bytes.iter().map(|b| text(*b)).collect();
    PayloadKey::ring(texts.iter().map(String::as_str)).unwrap()
}

async fn a_ring_opens_the_old_and_seals_with_the_new(backend: Backend) {
    let db = TestDb::on(backend).await;
    let old = db.another_store(ring(&[1])).await;
    old.check_payload_key().await.unwrap();
    let crm = db.destination("crm", Region::US).await;
    let before = old
        .schedule(new_task("before", &crm, Region::US))
        .await
        .unwrap()
        .task;

    // The old key alone is refused once the new one is recorded, and the
    // new one alone is refused while payloads are sealed under the old.
    let new_only = db.another_store(ring(&[2])).await;
    match new_only.check_payload_key().await.unwrap_err() {
        StoreError::OtherPayloadKey { missing, .. } => {
            assert_eq!(missing, PayloadKey::from_bytes([1; 32]).fingerprint_hex());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        db.count("SELECT count(*) AS n FROM payload_keys").await,
        1,
        "a refused key is not recorded"
    );

    let rotated = db.another_store(ring(&[2, 1])).await;
    rotated.check_payload_key().await.unwrap();
    assert_eq!(db.count("SELECT count(*) AS n FROM payload_keys").await, 2);
    assert_eq!(
        rotated.payload(&before).await.unwrap(),
        old.payload(&before).await.unwrap(),
        "the ring opens what the old key sealed"
    );
    let after = rotated
        .schedule(new_task("after", &crm, Region::US))
        .await
        .unwrap()
        .task;
    assert!(
        old.payload(&after).await.is_err(),
        "sealed with the newest key, which the old process lacks"
    );
    assert!(
        old.check_payload_key().await.is_err(),
        "the old key alone now lacks the new one"
    );
    assert!(rotated.payload(&after).await.is_ok());
}

#[tokio::test]
async fn postgres_a_ring_opens_the_old_and_seals_with_the_new() {
    a_ring_opens_the_old_and_seals_with_the_new(Backend::Postgres).await;
}

#[tokio::test]
async fn sqlite_a_ring_opens_the_old_and_seals_with_the_new() {
    a_ring_opens_the_old_and_seals_with_the_new(Backend::Sqlite).await;
}
