//! What a claim may and may not take.

use chrono::Duration;
use remit::domain::{AttemptOutcome, AttemptRecord, FailureReason, Region, TaskState};
use remit::store::{Store, TransitionOutcome};

use crate::support::{claim, t0, TestDb};

#[tokio::test]
async fn an_expired_lease_is_reclaimed_and_the_abandoned_attempt_logged() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Eu).await;
    let id = db.task("r1", &dest, Region::Eu).await;

    let first = db
        .store
        .claim_due(&claim(Region::Eu, "eu-3", 10))
        .await
        .unwrap();
    assert_eq!(first.len(), 1);
    assert!(!first[0].reclaimed);
    assert_eq!(first[0].lease_expires_at, t0() + Duration::seconds(30));

    // Still leased and not expired: nobody else gets it.
    db.clock().advance(Duration::seconds(29));
    assert!(db
        .store
        .claim_due(&claim(Region::Eu, "eu-4", 10))
        .await
        .unwrap()
        .is_empty());

    // eu-3 vanished; at expiry any consumer of the region takes over.
    db.clock().advance(Duration::seconds(1));
    let second = db
        .store
        .claim_due(&claim(Region::Eu, "eu-4", 10))
        .await
        .unwrap();
    assert_eq!(second.len(), 1);
    assert!(second[0].reclaimed);
    assert_eq!(second[0].task.id, id);
    assert_eq!(second[0].task.attempt_count, 2);
    assert!(second[0].lease_token > first[0].lease_token);
    assert_eq!(second[0].task.lease_owner.as_deref(), Some("eu-4"));
    assert_eq!(
        second[0].task.idempotency_key, first[0].task.idempotency_key,
        "the key is stable across attempts"
    );

    let log = db.store.attempts(id).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, AttemptOutcome::Abandoned);
    assert_eq!(log[0].consumer_id, "eu-3");
    assert_eq!(log[0].lease_token, first[0].lease_token);
    assert_eq!(log[0].attempt_number, 1);
    assert_eq!(
        db.store
            .stats()
            .reclaimed
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[tokio::test]
async fn terminal_rows_are_never_claimed() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Us).await;
    db.task("delivered", &dest, Region::Us).await;
    db.task("failed", &dest, Region::Us).await;
    let claimed = db
        .store
        .claim_due(&claim(Region::Us, "us-1", 10))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    for c in &claimed {
        let outcome = if c.task.reminder_id.as_str() == "delivered" {
            db.store
                .mark_delivered(&c.lease(), &AttemptRecord::default())
                .await
        } else {
            db.store
                .fail(
                    &c.lease(),
                    &FailureReason::Status(410),
                    &AttemptRecord::default(),
                )
                .await
        };
        assert_eq!(outcome.unwrap(), TransitionOutcome::Applied);
    }
    db.clock().advance(Duration::days(30));
    assert!(db
        .store
        .claim_due(&claim(Region::Us, "us-2", 10))
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn nothing_is_claimed_before_its_business_deadline() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Us).await;
    db.task("r1", &dest, Region::Us).await;
    db.clock().set(t0() - Duration::milliseconds(1));
    assert!(db
        .store
        .claim_due(&claim(Region::Us, "us-1", 10))
        .await
        .unwrap()
        .is_empty());
    db.clock().set(t0());
    assert_eq!(
        db.store
            .claim_due(&claim(Region::Us, "us-1", 10))
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_retry_wait_row_waits_for_its_available_at() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Eu).await;
    let id = db.task("r1", &dest, Region::Eu).await;
    let c = db
        .store
        .claim_due(&claim(Region::Eu, "eu-1", 1))
        .await
        .unwrap()
        .remove(0);
    let next = t0() + Duration::seconds(120);
    let outcome = db
        .store
        .move_to_retry_wait(&c.lease(), next, &AttemptRecord::default())
        .await
        .unwrap();
    assert_eq!(outcome, TransitionOutcome::Applied);
    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::RetryWait);
    assert_eq!(task.available_at, next);
    assert_eq!(task.lease_token, None);

    db.clock().set(next - Duration::milliseconds(1));
    assert!(db
        .store
        .claim_due(&claim(Region::Eu, "eu-2", 1))
        .await
        .unwrap()
        .is_empty());
    db.clock().set(next);
    let again = db
        .store
        .claim_due(&claim(Region::Eu, "eu-2", 1))
        .await
        .unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].task.id, id, "the same logical webhook, not a copy");
    assert_eq!(again[0].task.attempt_count, 2);
    assert!(!again[0].reclaimed);
}

#[tokio::test]
async fn release_gives_the_row_back_without_counting_an_attempt() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Us).await;
    let id = db.task("r1", &dest, Region::Us).await;
    let c = db
        .store
        .claim_due(&claim(Region::Us, "us-1", 1))
        .await
        .unwrap()
        .remove(0);
    let later = t0() + Duration::seconds(10);
    assert_eq!(
        db.store.release(&c.lease(), Some(later)).await.unwrap(),
        TransitionOutcome::Applied
    );
    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::Pending);
    assert_eq!(task.attempt_count, 0);
    assert_eq!(task.available_at, later);
    assert!(db.store.attempts(id).await.unwrap().is_empty());
    assert!(db
        .store
        .claim_due(&claim(Region::Us, "us-1", 1))
        .await
        .unwrap()
        .is_empty());
    db.clock().set(later);
    assert_eq!(
        db.store
            .claim_due(&claim(Region::Us, "us-1", 1))
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn extend_lease_keeps_the_row_from_being_reclaimed() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Us).await;
    db.task("r1", &dest, Region::Us).await;
    let c = db
        .store
        .claim_due(&claim(Region::Us, "us-1", 1))
        .await
        .unwrap()
        .remove(0);
    db.clock().advance(Duration::seconds(20));
    assert_eq!(
        db.store
            .extend_lease(&c.lease(), Duration::seconds(30))
            .await
            .unwrap(),
        TransitionOutcome::Applied
    );
    db.clock().advance(Duration::seconds(20));
    assert!(db
        .store
        .claim_due(&claim(Region::Us, "us-2", 1))
        .await
        .unwrap()
        .is_empty());
    db.clock().advance(Duration::seconds(10));
    assert_eq!(
        db.store
            .claim_due(&claim(Region::Us, "us-2", 1))
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn abandon_counts_the_attempt_and_makes_the_task_due_again() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Us).await;
    let id = db.task("r1", &dest, Region::Us).await;
    let c = db
        .store
        .claim_due(&claim(Region::Us, "us-1", 1))
        .await
        .unwrap()
        .remove(0);
    let record = AttemptRecord {
        started_at: Some(t0()),
        ..AttemptRecord::default()
    };
    assert_eq!(
        db.store.abandon(&c.lease(), &record).await.unwrap(),
        TransitionOutcome::Applied
    );
    let log = db.store.attempts(id).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, AttemptOutcome::Abandoned);
    let again = db
        .store
        .claim_due(&claim(Region::Us, "us-2", 1))
        .await
        .unwrap();
    assert_eq!(
        again.len(),
        1,
        "due again without waiting for a lease to expire"
    );
    assert_eq!(again[0].task.attempt_count, 2);
}

#[tokio::test]
async fn replay_returns_a_failed_task_with_a_fresh_horizon() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::Us).await;
    let id = db.task("r1", &dest, Region::Us).await;
    assert!(matches!(
        db.store.replay(id, Duration::hours(1)).await.unwrap(),
        remit::store::Replayed::NotFailed(_)
    ));
    let c = db
        .store
        .claim_due(&claim(Region::Us, "us-1", 1))
        .await
        .unwrap()
        .remove(0);
    db.store
        .fail(
            &c.lease(),
            &FailureReason::MaxAttempts,
            &AttemptRecord::default(),
        )
        .await
        .unwrap();
    db.clock().advance(Duration::days(5));
    let now = t0() + Duration::days(5);
    match db.store.replay(id, Duration::hours(1)).await.unwrap() {
        remit::store::Replayed::Replayed(task) => {
            assert_eq!(task.state, TaskState::Pending);
            assert_eq!(task.available_at, now);
            assert_eq!(task.retry_horizon_at, now + Duration::hours(1));
            assert_eq!(task.attempt_count, 0);
            assert_eq!(task.failure_reason, None);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        db.store
            .claim_due(&claim(Region::Us, "us-1", 1))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(matches!(
        db.store
            .replay(remit::domain::TaskId::random(), Duration::hours(1))
            .await
            .unwrap(),
        remit::store::Replayed::NotFound
    ));
}
