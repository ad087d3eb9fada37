//! A disabled destination's tasks: they wait unsent, and once their retry
//! horizon passes they fail with `destination_disabled`; a lease that runs
//! out meanwhile (no claim takes such a row) is handed back first, so an
//! ordering line behind it is not held forever.

use super::*;
use remit::store::{Destinations, Leases, Schedule, Upkeep};

pub async fn a_disabled_destinations_tasks_fail_at_their_horizon<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let billing = destination(h, "billing", Region::US).await;
    let held = task(h, "r1", &crm, Region::US).await;
    let leased = task(h, "r2", &crm, Region::US).await;
    let healthy = task(h, "r3", &billing, Region::US).await;
    let elsewhere_dest = destination(h, "crm-eu", Region::EU).await;
    let elsewhere = task(h, "r4", &elsewhere_dest, Region::EU).await;
    // One of crm's tasks is out on a lease when crm is disabled.
    h.clock().advance(Duration::hours(1));
    let mut crm_only = claim(Region::US, "c", 1);
    crm_only.skip = vec![billing.clone()];
    let claimed = s.claim_due(&crm_only).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let (held, leased) = if claimed[0].task.id == held {
        (leased, held)
    } else {
        (held, leased)
    };
    for d in [&crm, &elsewhere_dest] {
        s.disable_destination(d, None).await.unwrap();
    }

    // Before the horizon nothing fails, and a live lease is its holder's.
    assert_eq!(
        s.fail_disabled_past_horizon(Region::US, 10).await.unwrap(),
        0
    );
    let state = |id| async move { s.task(id).await.unwrap().unwrap().state };
    assert_eq!(state(leased).await, TaskState::Leased);

    // Its lease runs out: no claim takes a disabled destination's rows, so
    // the lease is handed back here, the lost attempt logged as abandoned.
    h.clock().advance(Duration::seconds(31));
    assert_eq!(
        s.fail_disabled_past_horizon(Region::US, 10).await.unwrap(),
        0
    );
    let reclaimed = s.task(leased).await.unwrap().unwrap();
    assert_eq!(
        (
            reclaimed.state,
            reclaimed.lease_token,
            reclaimed.attempt_count
        ),
        (TaskState::RetryWait, None, 1)
    );
    let lost: Vec<_> = s
        .attempts(leased)
        .await
        .unwrap()
        .iter()
        .map(|a| a.outcome)
        .collect();
    assert_eq!(lost, [AttemptOutcome::Abandoned]);

    let past = t0() + Duration::hours(1) + Duration::seconds(31) + Duration::days(3);
    h.clock().set(past);
    assert_eq!(
        s.fail_disabled_past_horizon(Region::US, 10).await.unwrap(),
        2
    );
    for id in [held, leased] {
        let failed = s.task(id).await.unwrap().unwrap();
        assert_eq!(failed.state, TaskState::Failed);
        assert_eq!(
            failed.failure_reason.as_deref(),
            Some("destination_disabled")
        );
        assert_eq!(failed.finalized_at, Some(past));
    }
    assert_eq!(
        state(healthy).await,
        TaskState::Pending,
        "its destination is enabled"
    );
    assert_eq!(
        state(elsewhere).await,
        TaskState::Pending,
        "another region's"
    );
    assert_eq!(
        s.fail_disabled_past_horizon(Region::US, 10).await.unwrap(),
        0
    );
    assert_eq!(
        s.fail_disabled_past_horizon(Region::EU, 10).await.unwrap(),
        1
    );
}

/// A line's head out on a lease when its destination is disabled: the
/// lease runs out, the head is handed back and fails at its horizon, and the
/// line behind it goes on once the destination is enabled again.
pub async fn a_line_behind_a_disabled_destinations_lapsed_head_moves_on<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::US).await;
    let key = remit::domain::OrderingKey::new("patient-1").unwrap();
    let in_line = |reminder: &'static str, not_before| {
        let crm = crm.clone();
        let key = key.clone();
        async move {
            let new = remit::domain::NewTask {
                not_before,
                ordering_key: Some(key),
                ..new_task(reminder, &crm, Region::US)
            };
            s.schedule(new).await.unwrap().task.id
        }
    };
    let head = in_line("r1", t0()).await;
    // Due days later, so its own horizon is still ahead when the head's
    // has passed.
    let next = in_line("r2", t0() + Duration::days(2)).await;
    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.id, head);
    s.disable_destination(&crm, None).await.unwrap();

    h.clock()
        .set(t0() + Duration::days(3) + Duration::seconds(1));
    assert_eq!(
        s.fail_disabled_past_horizon(Region::US, 10).await.unwrap(),
        1
    );
    let ended = s.task(head).await.unwrap().unwrap();
    assert_eq!(
        (ended.state, ended.failure_reason.as_deref()),
        (TaskState::Failed, Some("destination_disabled"))
    );
    assert_eq!(
        s.task(next).await.unwrap().unwrap().state,
        TaskState::Pending
    );
    s.enable_destination(&crm).await.unwrap();
    let claimed = s.claim_due(&claim(Region::US, "c", 5)).await.unwrap();
    let ids: Vec<TaskId> = claimed.iter().map(|c| c.task.id).collect();
    assert_eq!(ids, [next], "the line moved on");
}
