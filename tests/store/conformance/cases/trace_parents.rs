//! The traceparent a task was scheduled with: kept as given, read back by
//! every read and claim, untouched by a repeat, a finish or a replay.

use remit::domain::TraceParent;
use remit::store::{Leases, Schedule};

use super::*;

fn parent(span: u64) -> TraceParent {
    TraceParent::new(0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736, span, 1).unwrap()
}

pub async fn a_task_keeps_the_traceparent_it_was_scheduled_with<H: Harness>(h: &H) {
    let s = h.store();
    let d = destination(h, "crm", Region::EU).await;
    let mut traced = new_task("traced", &d, Region::EU);
    traced.traceparent = Some(parent(1));
    let first = s.schedule(traced.clone()).await.unwrap();
    assert!(first.created);
    assert_eq!(first.task.traceparent, Some(parent(1)));
    let read = s.task(first.task.id).await.unwrap().unwrap();
    assert_eq!(read.traceparent, Some(parent(1)));

    // A repeat comes with a span of its own: still a repeat, and the task
    // keeps the first request's.
    traced.traceparent = Some(parent(2));
    let again = s.schedule(traced).await.unwrap();
    assert!(!again.created);
    assert_eq!(again.task.traceparent, Some(parent(1)));

    let mut batched = new_task("batched", &d, Region::EU);
    batched.traceparent = Some(parent(3));
    let answers = s
        .schedule_many(vec![batched, new_task("untraced", &d, Region::EU)])
        .await
        .unwrap();
    let batched = answers[0].as_ref().unwrap();
    let untraced = answers[1].as_ref().unwrap();
    assert!(batched.created && untraced.created);
    assert_eq!(batched.task.traceparent, Some(parent(3)));
    assert_eq!(untraced.task.traceparent, None);

    h.clock().advance(Duration::hours(1));
    let claimed = s.claim_due(&claim(Region::EU, "c", 10)).await.unwrap();
    assert_eq!(claimed.len(), 3);
    let claimed_parent = |id: TaskId| {
        claimed
            .iter()
            .find(|c| c.task.id == id)
            .map(|c| c.task.traceparent.clone())
            .unwrap()
    };
    assert_eq!(claimed_parent(first.task.id), Some(parent(1)));
    assert_eq!(claimed_parent(batched.task.id), Some(parent(3)));
    assert_eq!(claimed_parent(untraced.task.id), None);

    let lease = claimed
        .iter()
        .find(|c| c.task.id == first.task.id)
        .unwrap()
        .lease();
    assert_eq!(
        s.finish(&lease, &d, &delivered(record(200))).await.unwrap(),
        TransitionOutcome::Applied
    );
    let finished = s.task(first.task.id).await.unwrap().unwrap();
    assert_eq!(finished.state, TaskState::Delivered);
    assert_eq!(finished.traceparent, Some(parent(1)));

    // A replay keeps it: the new attempts join the same trace.
    let lease = claimed
        .iter()
        .find(|c| c.task.id == batched.task.id)
        .unwrap()
        .lease();
    s.fail(&lease, &FailureReason::Status(410), &record(410))
        .await
        .unwrap();
    match s.replay(batched.task.id, Duration::hours(1)).await.unwrap() {
        Replayed::Replayed(task) => assert_eq!(task.traceparent, Some(parent(3))),
        other => panic!("not replayed: {other:?}"),
    }
}
