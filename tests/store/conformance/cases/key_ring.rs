//! A ring of payload keys: the newest seals, any opens; a ring that holds
//! every recorded key passes the start-up check and records its newest
//! (a rotation); one that lacks a recorded key is refused, naming it;
//! `remit rekey` re-seals in batches and forgets the old key.

use base64::Engine as _;
use remit::payload_crypto::PayloadKey;
use remit::store::{Destinations, Keys, Schedule, Transfer};

use super::*;

fn text(byte: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

pub(super) fn ring(bytes: &[u8]) -> PayloadKey {
    let texts: Vec<String> = bytes.iter().map(|b| text(*b)).collect();
    PayloadKey::ring(texts.iter().map(String::as_str)).unwrap()
}

fn fingerprint(byte: u8) -> String {
    PayloadKey::from_bytes([byte; 32]).fingerprint_hex()
}

/// The check at start refuses `store`'s ring, naming the key it lacks.
async fn refused<S: Keys>(store: &S, lacking: u8) {
    match store.check_payload_key().await.unwrap_err() {
        StoreError::OtherPayloadKey { missing, .. } => assert_eq!(missing, fingerprint(lacking)),
        other => panic!("{other:?}"),
    }
}

async fn destination_with_secret<S: Store>(store: &S, id: &str) -> DestinationId {
    let id = DestinationId::new(id).unwrap();
    let new = NewDestination::new(
        id.clone(),
        Region::US,
        "https://hooks.example/in",
        Some(format!("whsec_{}", text(9))),
    )
    .unwrap();
    store.add_destination(new).await.unwrap();
    id
}

pub async fn a_ring_opens_the_old_and_seals_with_the_new<H: Harness>(h: &H) {
    let old = h.with_key(ring(&[1])).await;
    old.check_payload_key().await.unwrap();
    let crm = destination(h, "crm", Region::US).await;
    let before = old
        .schedule(new_task("before", &crm, Region::US))
        .await
        .unwrap()
        .task;

    // The old key alone is refused once the new one is recorded, and the
    // new one alone is refused while payloads are sealed under the old.
    let new_only = h.with_key(ring(&[2])).await;
    refused(&new_only, 1).await;
    assert_eq!(
        new_only.record_payload_key().await.unwrap().len(),
        1,
        "a refused key is not recorded"
    );

    let rotated = h.with_key(ring(&[2, 1])).await;
    rotated.check_payload_key().await.unwrap();
    assert_eq!(rotated.record_payload_key().await.unwrap().len(), 2);
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
    refused(&old, 2).await;
    assert!(rotated.payload(&after).await.is_ok());
}

pub async fn rekey_reseals_in_batches_and_forgets_the_old_key<H: Harness>(h: &H) {
    let old = h.with_key(ring(&[1])).await;
    old.check_payload_key().await.unwrap();
    let crm = destination_with_secret(&old, "crm").await;
    let mut tasks = Vec::new();
    for n in 0..3 {
        let new = new_task(&format!("r{n}"), &crm, Region::US);
        tasks.push((old.schedule(new.clone()).await.unwrap().task, new.payload));
    }
    let rotated = h.with_key(ring(&[2, 1])).await;
    rotated.check_payload_key().await.unwrap();
    let counts = |c: Vec<remit::store::KeyCount>| -> Vec<(String, i64, i64)> {
        c.into_iter()
            .map(|c| (c.fingerprint, c.payloads, c.secrets))
            .collect()
    };
    assert_eq!(
        counts(rotated.sealed_counts().await.unwrap()),
        vec![(fingerprint(1), 3, 1)]
    );

    let first = rotated.rekey_batch(None, 2).await.unwrap();
    assert_eq!((first.payloads, first.secrets), (2, 1));
    assert!(first.next.is_some());
    let second = rotated.rekey_batch(first.next, 2).await.unwrap();
    assert_eq!((second.payloads, second.secrets), (1, 0));
    let last = rotated.rekey_batch(second.next, 2).await.unwrap();
    assert_eq!((last.payloads, last.secrets, last.next), (0, 0, None));
    assert_eq!(
        counts(rotated.sealed_counts().await.unwrap()),
        vec![(fingerprint(2), 3, 1)]
    );

    let forgotten = rotated.forget_unused_keys().await.unwrap();
    assert_eq!(
        forgotten,
        vec![PayloadKey::from_bytes([1; 32]).fingerprint().to_vec()]
    );
    let new_only = h.with_key(ring(&[2])).await;
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
    refused(&old, 2).await;
}

/// A destination exported from a store whose key this one lacks: its
/// secret's key is recorded on import, so a process without it is refused
/// at start, naming it, instead of failing every send to the destination.
pub async fn an_imported_secret_records_its_key<H: Harness>(h: &H) {
    let exporter = h.with_key(ring(&[1])).await;
    exporter.check_payload_key().await.unwrap();
    destination_with_secret(&exporter, "crm").await;
    let records = exporter.export_destinations().await.unwrap();

    let target = h.another_empty().await;
    let importer = target.with_key(ring(&[2])).await;
    importer.check_payload_key().await.unwrap();
    importer.import_destinations(records).await.unwrap();
    refused(&importer, 1).await;
    let both = target.with_key(ring(&[2, 1])).await;
    both.check_payload_key().await.unwrap();
}

/// A payload this ring cannot open is told apart by what the database
/// records: under a key another ring may hold (nothing recorded, or a
/// recorded key this ring lacks) it is `WrongKey`, which a process with
/// that key opens; under a key recorded nowhere while this ring holds
/// every recorded key, no process opens it: `UnknownKey`.
pub async fn a_key_no_process_holds_is_told_from_another_processs<H: Harness>(h: &H) {
    use remit::payload_crypto::PayloadCryptoError;
    let stray = h.with_key(ring(&[9])).await;
    let crm = destination(h, "crm", Region::US).await;
    let task = stray
        .schedule(new_task("stray", &crm, Region::US))
        .await
        .unwrap()
        .task;
    let ours = h.with_key(ring(&[1])).await;
    assert!(
        matches!(
            unopened(&ours, &task).await,
            PayloadCryptoError::WrongKey { .. }
        ),
        "nothing recorded"
    );
    ours.check_payload_key().await.unwrap();
    let e = unopened(&ours, &task).await;
    assert!(matches!(e, PayloadCryptoError::UnknownKey { .. }), "{e:?}");
    assert!(!e.another_process_may_open());
    // A ring that lacks the recorded key: the payload may be another's.
    let other = h.with_key(ring(&[8])).await;
    assert!(matches!(
        unopened(&other, &task).await,
        PayloadCryptoError::WrongKey { .. }
    ));
}

/// Why `store` could not open the task's payload.
async fn unopened<S: Store>(
    store: &S,
    task: &remit::domain::Task,
) -> remit::payload_crypto::PayloadCryptoError {
    match store.payload(task).await {
        Err(StoreError::Payload(e)) => e,
        other => panic!("{other:?}"),
    }
}
