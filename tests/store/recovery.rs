//! What a claim may and may not take.

use chrono::Duration;
use remit::domain::{AttemptOutcome, AttemptRecord, FailureReason, Region};
use remit::store::{Leases, Schedule, TransitionOutcome};

use crate::support::{delivered, t0, TestDb};

#[tokio::test]
async fn an_expired_lease_is_reclaimed_and_the_abandoned_attempt_logged() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::EU).await;
    let id = db.task("r1", &dest, Region::EU).await;

    let first = db.claim(Region::EU, "eu-3", 10).await;
    assert_eq!(first.len(), 1);
    assert!(!first[0].reclaimed);
    assert_eq!(first[0].lease_expires_at, t0() + Duration::seconds(30));

    // Still leased and not expired: nobody else gets it.
    db.clock().advance(Duration::seconds(29));
    assert!(db.claim(Region::EU, "eu-4", 10).await.is_empty());

    // eu-3 vanished; at expiry any consumer of the region takes over.
    db.clock().advance(Duration::seconds(1));
    let second = db.claim(Region::EU, "eu-4", 10).await;
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
    assert_eq!(log[0].lease_owner, "eu-3");
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
    let dest = db.destination("crm", Region::US).await;
    db.task("delivered", &dest, Region::US).await;
    db.task("failed", &dest, Region::US).await;
    let claimed = db.claim(Region::US, "us-1", 10).await;
    assert_eq!(claimed.len(), 2);
    for c in &claimed {
        let outcome = if c.task.reminder_id.as_str() == "delivered" {
            db.store
                .finish(
                    &c.lease(),
                    &c.task.destination_id,
                    &delivered(AttemptRecord::default()),
                )
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
    assert!(db.claim(Region::US, "us-2", 10).await.is_empty());
}
