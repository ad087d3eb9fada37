//! Scheduling: idempotency, validation, and batches.

use super::*;
use remit::store::Schedule;

pub async fn scheduling_is_idempotent_and_validated<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::EU).await;
    let first = s.schedule(new_task("r1", &d, Region::EU)).await.unwrap();
    assert!(first.created);
    assert_eq!(first.task.state, TaskState::Pending);
    let now = h.clock().now_param().unwrap();
    assert_eq!(
        (first.task.created_at, first.task.updated_at),
        (now, now),
        "stamped with the store's clock"
    );
    let again = s.schedule(new_task("r1", &d, Region::EU)).await.unwrap();
    assert!(!again.created);
    assert_eq!(again.task, first.task);
    let mut changed = new_task("r1", &d, Region::EU);
    changed.payload = Payload::json("{}");
    assert!(
        matches!(s.schedule(changed).await, Err(StoreError::Conflict { differs, .. }) if differs == "payload")
    );
    let mut wrong_region = new_task("r2", &d, Region::US);
    wrong_region.region = Region::US;
    assert!(
        matches!(s.schedule(wrong_region).await, Err(StoreError::Invalid(e)) if e.field == "region")
    );
    let nowhere = DestinationId::new("nowhere").unwrap();
    assert!(
        matches!(s.schedule(new_task("r3", &nowhere, Region::EU)).await, Err(StoreError::Invalid(e)) if e.field == "destination_id")
    );
    assert_eq!(
        s.payload(&first.task).await.unwrap(),
        new_task("r1", &d, Region::EU).payload
    );
    let other = h
        .with_key(remit::payload_crypto::PayloadKey::from_bytes([9; 32]))
        .await;
    let opened = other.payload(&first.task).await;
    assert!(
        matches!(opened, Err(StoreError::Payload(_))),
        "a payload sealed under another key must not open: {opened:?}"
    );
}

pub async fn a_batch_answers_each_task_as_schedule_would<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::EU).await;
    let existing = s.schedule(new_task("old", &d, Region::EU)).await.unwrap();
    let mut conflicting = new_task("old", &d, Region::EU);
    conflicting.payload = Payload::json("{}");
    let nowhere = DestinationId::new("nowhere").unwrap();
    let batch = vec![
        new_task("a", &d, Region::EU),
        new_task("old", &d, Region::EU),
        conflicting,
        new_task("lost", &nowhere, Region::EU),
        new_task("a", &d, Region::EU),
        new_task("b", &d, Region::EU),
    ];
    let answers = s.schedule_many(batch).await.unwrap();
    assert_eq!(answers.len(), 6, "one answer per task, in order");
    let a = answers[0].as_ref().unwrap();
    assert!(a.created);
    let repeat = answers[1].as_ref().unwrap();
    assert!(!repeat.created);
    assert_eq!(repeat.task, existing.task);
    assert!(
        matches!(&answers[2], Err(StoreError::Conflict { differs, .. }) if differs == "payload")
    );
    assert!(matches!(&answers[3], Err(StoreError::Invalid(e)) if e.field == "destination_id"));
    let twice = answers[4].as_ref().unwrap();
    assert!(!twice.created, "a repeat within the batch is a repeat");
    assert_eq!(twice.task.id, a.task.id);
    let b = answers[5].as_ref().unwrap();
    assert!(b.created);
    // Written whole: each created task opens to its own payload.
    assert_eq!(
        s.payload(&b.task).await.unwrap(),
        new_task("b", &d, Region::EU).payload
    );
    assert_eq!(
        s.payload(&existing.task).await.unwrap(),
        new_task("old", &d, Region::EU).payload,
        "a conflict in a batch leaves the stored task alone"
    );
    assert!(s.schedule_many(Vec::new()).await.unwrap().is_empty());
}

/// A repeat whose stored payload this process's key cannot open is that
/// task's own answer; the rest of the batch is scheduled.
pub async fn a_repeat_that_cannot_be_opened_fails_alone<H: Harness>(h: &H) {
    let d = destination(h, "crm", Region::EU).await;
    h.store()
        .schedule(new_task("old", &d, Region::EU))
        .await
        .unwrap();
    let other = h
        .with_key(remit::payload_crypto::PayloadKey::from_bytes([9; 32]))
        .await;
    let answers = other
        .schedule_many(vec![
            new_task("old", &d, Region::EU),
            new_task("new", &d, Region::EU),
        ])
        .await
        .unwrap();
    assert!(
        matches!(&answers[0], Err(StoreError::Payload(_))),
        "{answers:?}"
    );
    assert!(answers[1].as_ref().unwrap().created);
}
