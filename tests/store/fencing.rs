//! A consumer that lost its lease can change nothing.

use chrono::Duration;
use remit::domain::{AttemptOutcome, AttemptRecord, ClaimedTask, FailureReason, Region, TaskState};
use remit::store::{Leases, Schedule, TransitionOutcome};

use crate::support::{delivered, retry_at, t0, TestDb};

/// A task claimed by `old`, whose lease expired and was taken by `new`.
async fn reclaimed(db: &TestDb) -> (ClaimedTask, ClaimedTask) {
    let dest = db.destination("crm", Region::EU).await;
    db.task("r1", &dest, Region::EU).await;
    let old = db.claim(Region::EU, "old", 1).await.remove(0);
    db.clock().advance(Duration::seconds(31));
    let new = db.claim(Region::EU, "new", 1).await.remove(0);
    assert!(new.reclaimed);
    (old, new)
}

fn seen(status: u16) -> AttemptRecord {
    AttemptRecord {
        started_at: Some(t0()),
        received_at: Some(t0() + Duration::milliseconds(30)),
        http_status: Some(status),
        ..AttemptRecord::default()
    }
}

#[tokio::test]
async fn after_a_reclaim_the_old_token_can_do_nothing() {
    let db = TestDb::new().await;
    let (old, new) = reclaimed(&db).await;
    let stale = old.lease();
    let later = t0() + Duration::minutes(5);

    assert_eq!(
        db.store
            .finish(&stale, &old.task.destination_id, &delivered(seen(200)))
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );
    assert_eq!(
        db.store
            .finish(
                &stale,
                &old.task.destination_id,
                &retry_at(db.store.clock(), later, seen(429))
            )
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );
    assert_eq!(
        db.store
            .fail(&stale, &FailureReason::Status(400), &seen(400))
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );
    assert_eq!(
        db.store
            .extend_lease(&stale, Duration::minutes(5))
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );
    assert_eq!(
        db.store.hand_back(&stale, None).await.unwrap(),
        TransitionOutcome::Fenced
    );

    // The new holder's lease is untouched.
    let task = db.store.task(new.task.id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::Leased);
    assert_eq!(task.lease_token, Some(new.lease_token));
    assert_eq!(task.lease_owner.as_deref(), Some("new"));
    assert_eq!(task.lease_expires_at, Some(new.lease_expires_at));
    assert_eq!(task.attempt_count, 2);

    // The stale reports are in the log as fenced, with what they saw.
    let log = db.store.attempts(new.task.id).await.unwrap();
    let fenced: Vec<_> = log
        .iter()
        .filter(|a| a.outcome == AttemptOutcome::Fenced)
        .collect();
    assert_eq!(fenced.len(), 3);
    assert!(fenced
        .iter()
        .all(|a| a.lease_token == old.lease_token && a.lease_owner == "old"));
    assert_eq!(fenced[0].observed.http_status, Some(200));
    assert_eq!(
        db.store
            .stats()
            .fenced
            .load(std::sync::atomic::Ordering::Relaxed),
        5
    );

    // And the new holder finishes normally.
    assert_eq!(
        db.store
            .finish(
                &new.lease(),
                &new.task.destination_id,
                &delivered(seen(204))
            )
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
}

#[tokio::test]
async fn mark_delivered_twice_with_the_same_token_is_harmless() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    let id = db.task("r1", &dest, Region::US).await;
    let c = db.claim(Region::US, "us-1", 1).await.remove(0);
    assert_eq!(
        db.store
            .finish(&c.lease(), &c.task.destination_id, &delivered(seen(200)))
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    let first = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(
        db.store
            .finish(&c.lease(), &c.task.destination_id, &delivered(seen(200)))
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    assert_eq!(db.store.task(id).await.unwrap().unwrap(), first);
    let log = db.store.attempts(id).await.unwrap();
    assert_eq!(
        log.len(),
        1,
        "a repeated finish writes no second attempt row"
    );
}
