//! A ring of payload keys: the newest seals, any opens; a ring that holds
//! every recorded key passes the start-up check and records its newest
//! (a rotation); one that lacks a recorded key is refused, naming it.

use base64::Engine as _;
use remit::domain::{DestinationId, NewDestination, Region};
use remit::payload_crypto::PayloadKey;
use remit::store::{Keys, Transfer};
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

async fn rekey_reseals_in_batches_and_forgets_the_old_key(backend: Backend) {
    let db = TestDb::on(backend).await;
    let old = db.another_store(ring(&[1])).await;
    old.check_payload_key().await.unwrap();
    let crm = remit::domain::DestinationId::new("crm").unwrap();
    old.add_destination(
        remit::domain::NewDestination::new(
            crm.clone(),
            Region::US,
            "https://hooks.example/in",
            Some("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into()),
        )
        .unwrap(),
    )
    .await
    .unwrap();
    let mut tasks = Vec::new();
    for n in 0..3 {
        let new = new_task(&format!("r{n}"), &crm, Region::US);
        tasks.push((old.schedule(new.clone()).await.unwrap().task, new.payload));
    }
    let rotated = db.another_store(ring(&[2, 1])).await;
    rotated.check_payload_key().await.unwrap();
    let (k1, k2) = (
        PayloadKey::from_bytes([1; 32]).fingerprint_hex(),
        PayloadKey::from_bytes([2; 32]).fingerprint_hex(),
    );
    let counts = rotated.sealed_counts().await.unwrap();
    assert_eq!(counts.len(), 1);
    assert_eq!(
        (
            counts[0].fingerprint.as_str(),
            counts[0].payloads,
            counts[0].secrets
        ),
        (k1.as_str(), 3, 1)
    );

    let first = rotated.rekey_batch(None, 2).await.unwrap();
    assert_eq!((first.payloads, first.secrets), (2, 1));
    assert!(first.next.is_some());
    let second = rotated.rekey_batch(first.next, 2).await.unwrap();
    assert_eq!((second.payloads, second.secrets), (1, 0));
    let last = rotated.rekey_batch(second.next, 2).await.unwrap();
    assert_eq!((last.payloads, last.secrets, last.next), (0, 0, None));
    let counts = rotated.sealed_counts().await.unwrap();
    assert_eq!(counts.len(), 1);
    assert_eq!(
        (
            counts[0].fingerprint.as_str(),
            counts[0].payloads,
            counts[0].secrets
        ),
        (k2.as_str(), 3, 1)
    );

    let forgotten = rotated.forget_unused_keys().await.unwrap();
    assert_eq!(
        forgotten,
        vec![PayloadKey::from_bytes([1; 32]).fingerprint().to_vec()]
    );
    let new_only = db.another_store(ring(&[2])).await;
    new_only.check_payload_key().await.unwrap();
    for (task, payload) in &tasks {
        assert_eq!(
            &new_only.payload(task).await.unwrap(),
            payload,
            "the same bytes"
        );
    }
    let target = new_only.send_target(&crm).await.unwrap().unwrap();
    assert_eq!(target.signing_secrets.len(), 1, "the secret opens too");
    assert!(
        old.check_payload_key().await.is_err(),
        "the old key alone is refused"
    );
}

#[tokio::test]
async fn postgres_rekey_reseals_in_batches_and_forgets_the_old_key() {
    rekey_reseals_in_batches_and_forgets_the_old_key(Backend::Postgres).await;
}

#[tokio::test]
async fn sqlite_rekey_reseals_in_batches_and_forgets_the_old_key() {
    rekey_reseals_in_batches_and_forgets_the_old_key(Backend::Sqlite).await;
}

/// A destination exported from a database whose key this one lacks: its
/// secret's key is recorded on import, so a process without it is refused
/// at start, naming it, instead of failing every send to the destination.
async fn an_imported_secret_records_its_key(backend: Backend) {
    let source = TestDb::on(backend).await;
    let exporter = source.another_store(ring(&[1])).await;
    exporter.check_payload_key().await.unwrap();
    let secret = format!("whsec_{}", text(9));
    let crm = DestinationId::new("crm").unwrap();
    exporter
        .add_destination(
            NewDestination::new(crm, Region::US, "http://127.0.0.1:9/hook", Some(secret)).unwrap(),
        )
        .await
        .unwrap();
    let records = exporter.export_destinations().await.unwrap();

    let target = TestDb::on(backend).await;
    let importer = target.another_store(ring(&[2])).await;
    importer.check_payload_key().await.unwrap();
    importer.import_destinations(records).await.unwrap();
    match importer.check_payload_key().await.unwrap_err() {
        StoreError::OtherPayloadKey { missing, .. } => {
            assert_eq!(missing, PayloadKey::from_bytes([1; 32]).fingerprint_hex());
        }
        other => panic!("{other:?}"),
    }
    let both = target.another_store(ring(&[2, 1])).await;
    both.check_payload_key().await.unwrap();
}

#[tokio::test]
async fn postgres_an_imported_secret_records_its_key() {
    an_imported_secret_records_its_key(Backend::Postgres).await;
}

#[tokio::test]
async fn sqlite_an_imported_secret_records_its_key() {
    an_imported_secret_records_its_key(Backend::Sqlite).await;
}
