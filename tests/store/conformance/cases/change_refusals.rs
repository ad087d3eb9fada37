//! What a change refuses, so that nothing cancelled or erased is sent
//! again.

use remit::domain::Payload;
use remit::store::{Cancel, Changes, Destinations, Leases, Move, Reschedule, Schedule};

use super::changes::{claim_all, state, to};
use super::*;

/// What a change must refuse, and what a cancel that waited on an attempt
/// that then failed does: an erased payload is never replayed; a cancel
/// whose attempt failed ends the task `cancelled`, out of a replay's
/// reach; a new payload waits for no attempt; a tried task of an ordering
/// line keeps its place.
pub async fn changes_never_revive_what_was_cancelled_or_erased<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;

    // Cancelled while in flight, then the attempt fails for good.
    let id = task(h, "gone", &d, Region::US).await;
    let held = claim_one(h).await;
    assert!(matches!(
        s.cancel(id, "tok_ops").await.unwrap(),
        Cancel::AfterAttempt(_)
    ));
    s.fail(&held.lease(), &FailureReason::Status(410), &record(410))
        .await
        .unwrap();
    assert_eq!(s.settle_changes(Region::US, 10).await.unwrap(), 1);
    let t = state(h, id).await;
    assert_eq!((t.state, t.failure_reason), (TaskState::Cancelled, None));
    assert!(matches!(
        s.replay(id, Duration::hours(1)).await.unwrap(),
        Replayed::NotFailed(_)
    ));

    // Failed, then erased: never replayed.
    let failed = task(h, "failed", &d, Region::US).await;
    let held = claim_one(h).await;
    s.fail(&held.lease(), &FailureReason::Status(410), &record(410))
        .await
        .unwrap();
    s.erase(failed, "tok_ops").await.unwrap();
    assert!(matches!(
        s.replay(failed, Duration::hours(1)).await.unwrap(),
        Replayed::NotFailed(_)
    ));
    assert_eq!(state(h, failed).await.state, TaskState::Failed);

    // A new payload while an attempt is in flight is refused.
    let busy = task(h, "busy", &d, Region::US).await;
    let _held = claim_one(h).await;
    let with_payload = Reschedule {
        payload: Some(Payload::json(r#"{"new":true}"#)),
        ..to(t0() + Duration::days(3))
    };
    assert!(matches!(
        s.reschedule(busy, &with_payload).await.unwrap(),
        Move::Refused(_)
    ));
    assert_eq!(state(h, busy).await.waiting_change, None);

    // A tried task of a line keeps its place at the head.
    let keyed = remit::domain::NewTask {
        ordering_key: Some(remit::domain::OrderingKey::new("patient-1").unwrap()),
        ..new_task("head", &d, Region::US)
    };
    let head = s.schedule(keyed).await.unwrap().task.id;
    h.clock().advance(Duration::hours(2));
    let claimed = claim_all(h).await;
    let held = claimed
        .iter()
        .find(|c| c.task.id == head)
        .expect("the head");
    let now = h.clock().now_param().unwrap();
    s.finish(&held.lease(), &d, &retry_at(h.clock(), now, record(503)))
        .await
        .unwrap();
    assert!(matches!(
        s.reschedule(head, &to(t0() + Duration::days(30)))
            .await
            .unwrap(),
        Move::Refused(_)
    ));
}

/// Bringing an ended task back is a replay by another name: a move by a
/// caller who may not replay leaves a failed or cancelled task as it was
/// (`Move::Ended`), and one who may brings it back.
pub async fn only_a_caller_who_may_replay_brings_an_ended_task_back<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let cancelled = task(h, "cancelled", &d, Region::US).await;
    s.cancel(cancelled, "tok_ops").await.unwrap();
    let failed = task(h, "failed", &d, Region::US).await;
    let held = claim_one(h).await;
    s.fail(&held.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    let schedule_token = Reschedule {
        by: "tok_schedule".into(),
        revive: false,
        payload: Some(Payload::json(r#"{"again":true}"#)),
        ..to(t0() + Duration::days(1))
    };
    for id in [cancelled, failed] {
        let before = state(h, id).await;
        let payload = s.payload(&before).await.unwrap();
        match s.reschedule(id, &schedule_token).await.unwrap() {
            Move::Ended(t) => assert_eq!(t, before),
            other => panic!("{other:?}"),
        }
        assert_eq!(state(h, id).await, before, "nothing written");
        assert_eq!(
            s.payload(&before).await.unwrap(),
            payload,
            "nor the payload"
        );
        match s
            .reschedule(id, &to(t0() + Duration::days(1)))
            .await
            .unwrap()
        {
            Move::Moved(t) => assert_eq!(t.state, TaskState::Pending),
            other => panic!("{other:?}"),
        }
    }
}

/// A move asked while an attempt is in flight lapses when that attempt
/// fails the task, whoever asked: it does not bring the task back with a
/// fresh budget (a replay does).
pub async fn a_move_that_waited_lapses_when_the_attempt_fails_the_task<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let id = task(h, "last-try", &d, Region::US).await;
    let held = claim_one(h).await;
    let later = t0() + Duration::days(2);
    assert!(matches!(
        s.reschedule(id, &to(later)).await.unwrap(),
        Move::AfterAttempt(_)
    ));
    s.fail(&held.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    assert_eq!(s.settle_changes(Region::US, 10).await.unwrap(), 1);
    let t = state(h, id).await;
    assert_eq!(t.state, TaskState::Failed);
    assert_eq!(t.waiting_change, None);
    assert_eq!(t.not_before, t0(), "not moved");
    // A cancel of it now is a cancel of an ended task.
    assert!(matches!(
        s.cancel(id, "tok_ops").await.unwrap(),
        Cancel::Ended(_)
    ));
}

/// A task of a deleted destination is never moved, by anyone: it would be
/// sent to nothing, and hold the id from being registered again.
pub async fn a_deleted_destinations_task_is_never_moved<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::US).await;
    let failed = task(h, "failed", &d, Region::US).await;
    let held = claim_one(h).await;
    s.fail(&held.lease(), &FailureReason::MaxAttempts, &record(500))
        .await
        .unwrap();
    s.delete_destination(&d, None).await.unwrap();
    let before = state(h, failed).await;
    match s
        .reschedule(failed, &to(t0() + Duration::days(1)))
        .await
        .unwrap()
    {
        Move::DestinationDeleted(t) => assert_eq!(t, before),
        other => panic!("{other:?}"),
    }
    assert_eq!(state(h, failed).await, before);
    // Nor replayed, by an admin or a bulk replay.
    assert!(matches!(
        s.replay(failed, Duration::hours(1)).await.unwrap(),
        Replayed::NotFailed(_)
    ));
    assert_eq!(state(h, failed).await, before);
    // So the id registers again at once.
    let again = NewDestination::new(d.clone(), Region::US, "http://127.0.0.1:9/", None).unwrap();
    s.add_destination(again).await.unwrap();
}
