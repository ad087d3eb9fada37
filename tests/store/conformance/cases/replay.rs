//! Replay and reconciliation.

use super::*;
use remit::store::{Leases, Schedule, Upkeep};

pub async fn replay_and_reconcile<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let failed = task(h, "failed", &d, Region::US).await;
    let c = s
        .claim_due(&claim(Region::US, "c", 1))
        .await
        .unwrap()
        .remove(0);
    s.fail(&c.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    let stuck = task(h, "stuck", &d, Region::US).await;
    let c = s
        .claim_due(&claim(Region::US, "gone", 1))
        .await
        .unwrap()
        .remove(0);
    assert_eq!(c.task.id, stuck);
    h.clock().advance(Duration::hours(1));
    let request = ReconcileRequest {
        region: Some(Region::US),
        older_than: Duration::minutes(15),
        reclaim: true,
        ledger: None,
        list_limit: 10,
    };
    let report = s.reconcile(&request).await.unwrap();
    assert_eq!((report.expired_leases.count, report.reclaimed), (1, 1));
    assert_eq!(report.terminal, vec![("max_attempts".to_owned(), 1)]);
    assert_eq!(
        s.task(stuck).await.unwrap().unwrap().state,
        TaskState::RetryWait
    );
    match s.replay(failed, Duration::hours(2)).await.unwrap() {
        Replayed::Replayed(t) => assert_eq!(
            (t.state, t.attempt_count, t.attempts_since_replay()),
            (TaskState::Pending, 1, 0)
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.replay(failed, Duration::hours(2)).await.unwrap(),
        Replayed::NotFailed(_)
    ));
}

pub async fn replay_keeps_attempt_numbers_rising<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "replayed", &d, Region::US).await;
    let first = claim_one(h).await;
    s.finish(
        &first.lease(),
        &first.task.destination_id,
        &retry_at(h.clock(), t0(), record(503)),
    )
    .await
    .unwrap();
    let second = claim_one(h).await;
    s.fail(&second.lease(), &FailureReason::MaxAttempts, &record(503))
        .await
        .unwrap();

    match s.replay(id, Duration::hours(2)).await.unwrap() {
        Replayed::Replayed(t) => {
            assert_eq!(t.attempt_count, 2, "a replay keeps the count");
            assert_eq!(t.attempts_since_replay(), 0, "and grants a fresh budget");
        }
        other => panic!("{other:?}"),
    }
    // A lease handed back unsent after the replay is not an attempt: the
    // task is pending again, as a fresh one would be.
    let handed_back = claim_one(h).await;
    s.hand_back(&handed_back.lease(), None).await.unwrap();
    assert_eq!(s.task(id).await.unwrap().unwrap().state, TaskState::Pending);
    let third = claim_one(h).await;
    assert_eq!(third.lease().attempt, 3);
    assert_eq!(third.task.attempts_since_replay(), 1);
    s.finish(
        &third.lease(),
        &third.task.destination_id,
        &delivered(record(200)),
    )
    .await
    .unwrap();

    let numbers: Vec<i32> = s
        .attempts(id)
        .await
        .unwrap()
        .iter()
        .map(|a| a.attempt_number)
        .collect();
    assert_eq!(numbers, vec![1, 2, 3], "strictly increasing and unique");
}
