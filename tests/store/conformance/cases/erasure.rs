//! An erasure destroys a payload's data key with its bytes: each payload is
//! sealed under a key of its own, which only its row holds, sealed in turn
//! under the ring's key. A copy of the row taken before the erasure (an
//! export, a backup) opens with the ring key it was sealed under, as the
//! docs say, and with nothing else; once that key is retired (rotated, the
//! payloads resealed, the old key dropped) no copy opens. A reseal writes
//! the data key again and leaves the body's bytes as they were.

use remit::payload_crypto::{PayloadCryptoError, PayloadKey, SealedPayload};
use remit::store::{Changes, Keys, Schedule, Transfer};

use super::key_ring::ring;
use super::*;

pub async fn an_erased_payload_opens_from_no_copy_once_its_key_is_retired<H: Harness>(h: &H) {
    let old = h.with_key(ring(&[1])).await;
    old.check_payload_key().await.unwrap();
    let crm = destination(h, "crm", Region::US).await;
    let erased = old
        .schedule(new_task("erased", &crm, Region::US))
        .await
        .unwrap()
        .task;
    let kept = old
        .schedule(new_task("kept", &crm, Region::US))
        .await
        .unwrap()
        .task;
    let copy = old.export_tasks(None, 10).await.unwrap();
    let copy_of = |id: TaskId| copy.iter().find(|r| r.task.id == id).unwrap().clone();
    let (erased_copy, kept_copy) = (copy_of(erased.id), copy_of(kept.id));

    old.erase(erased.id, "tok_ops").await.unwrap();
    let now = old.export_tasks(None, 10).await.unwrap();
    let after = now.iter().find(|r| r.task.id == erased.id).unwrap();
    assert!(!after.has_payload());
    assert_eq!(after.sealed.ciphertext, Vec::<u8>::new(), "no bytes");
    assert_eq!(after.sealed.nonce, Vec::<u8>::new(), "no data key");
    assert!(old.payload(&erased).await.is_err());

    // The copy from before: its body does not open under the ring's key
    // alone (it is sealed under its data key)...
    let open = |key: &PayloadKey, record: &remit::store::TaskRecord, sealed: &SealedPayload| {
        key.open(record.task.payload_ref, &record.content_type, sealed)
    };
    let body_alone = SealedPayload {
        nonce: erased_copy.sealed.nonce[..24].to_vec(),
        ..erased_copy.sealed.clone()
    };
    assert!(open(&ring(&[1]), &erased_copy, &body_alone).is_err());
    // ...and with the data key it carried, it opens while key 1 is kept.
    assert!(open(&ring(&[1]), &erased_copy, &erased_copy.sealed).is_ok());

    // Key 1 retired: rotated to 2, everything resealed, 1 dropped.
    let rotated = h.with_key(ring(&[2, 1])).await;
    rotated.check_payload_key().await.unwrap();
    let mut next = None;
    loop {
        let round = rotated.rekey_batch(next, 10).await.unwrap();
        if round.next.is_none() {
            break;
        }
        next = round.next;
    }
    rotated.forget_unused_keys().await.unwrap();
    let new_only = h.with_key(ring(&[2])).await;
    new_only.check_payload_key().await.unwrap();
    // Nothing the store holds is under key 1 any more (so destroying it
    // costs nothing), and the copy from before opens under key 1 alone: once
    // key 1 is destroyed, it opens under nothing.
    let under: Vec<String> = new_only
        .sealed_counts()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.fingerprint)
        .collect();
    assert_eq!(under, [PayloadKey::from_bytes([2; 32]).fingerprint_hex()]);
    assert!(matches!(
        open(&ring(&[2]), &erased_copy, &erased_copy.sealed),
        Err(PayloadCryptoError::WrongKey { .. })
    ));
    // The payload that stays opens under the new key; its body's bytes are
    // those it was written with (only its data key was sealed again).
    assert_eq!(
        new_only.payload(&kept).await.unwrap(),
        new_task("kept", &crm, Region::US).payload
    );
    let resealed = new_only.export_tasks(None, 10).await.unwrap();
    let resealed = resealed.iter().find(|r| r.task.id == kept.id).unwrap();
    assert_eq!(resealed.sealed.ciphertext, kept_copy.sealed.ciphertext);
    assert_ne!(resealed.sealed.nonce, kept_copy.sealed.nonce);
}

/// A reschedule with a new payload seals it under a new data key: the
/// replaced payload's copy needs the old data key, which is gone.
pub async fn a_replaced_payload_gets_a_data_key_of_its_own<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let task = s
        .schedule(new_task("moved", &crm, Region::US))
        .await
        .unwrap()
        .task;
    let before = s.export_tasks(None, 10).await.unwrap()[0].clone();
    let change = remit::store::Reschedule {
        not_before: t0() + Duration::days(1),
        payload: Some(remit::domain::Payload::json(r#"{"new":true}"#)),
        by: "tok_ops".into(),
        revive: false,
    };
    s.reschedule(task.id, &change).await.unwrap();
    let after = s.export_tasks(None, 10).await.unwrap()[0].clone();
    assert_ne!(
        before.sealed.nonce[24..],
        after.sealed.nonce[24..],
        "another data key"
    );
    // The old body with the new row's data key does not open.
    let mixed = SealedPayload {
        ciphertext: before.sealed.ciphertext.clone(),
        nonce: [&before.sealed.nonce[..24], &after.sealed.nonce[24..]].concat(),
        ..after.sealed.clone()
    };
    assert!(crate::support::test_key()
        .open(task.payload_ref, &before.content_type, &mixed)
        .is_err());
}
