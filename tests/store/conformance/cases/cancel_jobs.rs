//! Bulk cancels: a replay job of action `cancel` cancels exactly the
//! matching tasks that have not ended and were scheduled before it, each
//! by the one-task cancel's rule (a task in flight after its attempt),
//! counts each once, carries on from its cursor after a restart, and is
//! refused when it names a failure reason or nothing.

use remit::domain::{OrderingKey, TenantId, WaitingChange};
use remit::store::{Cancel, Changes, JobAction, JobFilter, Jobs, Leases, NewJob, Schedule};

use super::*;
use crate::support::test_key;

fn cancel_job(region: Region, filter: JobFilter) -> NewJob {
    NewJob {
        region,
        action: JobAction::Cancel,
        filter,
        requested_by: "tok_ops".into(),
        horizon: Duration::hours(6),
    }
}

async fn scheduled<H: Harness>(
    h: &H,
    tenant: &str,
    reminder: &str,
    d: &DestinationId,
    region: Region,
) -> TaskId {
    let mut new = new_task(reminder, d, region);
    new.tenant_id = TenantId::new(tenant).unwrap();
    h.store().schedule(new).await.unwrap().task.id
}

async fn row<H: Harness>(h: &H, id: TaskId) -> remit::domain::Task {
    h.store().task(id).await.unwrap().expect("the task")
}

fn by_tenant_and_destination(d: &DestinationId) -> JobFilter {
    JobFilter {
        tenant: Some(TenantId::new("clinic-a").unwrap()),
        destination: Some(d.clone()),
        ..JobFilter::default()
    }
}

pub async fn a_cancel_job_cancels_exactly_the_matching_tasks_not_ended<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let sms = destination(h, "sms", Region::EU).await;
    let us = destination(h, "crm-us", Region::US).await;
    // One of each state, all matching: in flight, waiting for a retry,
    // delivered, failed.
    let in_flight = scheduled(h, "clinic-a", "leased", &crm, Region::EU).await;
    let retrying = scheduled(h, "clinic-a", "retry", &crm, Region::EU).await;
    let sent = scheduled(h, "clinic-a", "sent", &crm, Region::EU).await;
    let failed = scheduled(h, "clinic-a", "failed", &crm, Region::EU).await;
    h.clock().advance(Duration::hours(1));
    let mut held = None;
    for c in s
        .claim_due(&claim(Region::EU, "cancel-test", 10))
        .await
        .unwrap()
    {
        let now = h.clock().now_param().unwrap();
        let lease = c.lease();
        match c.task.id {
            id if id == retrying => {
                s.finish(
                    &lease,
                    &crm,
                    &retry_at(h.clock(), now + Duration::days(1), record(503)),
                )
                .await
                .unwrap();
            }
            id if id == sent => {
                s.finish(&lease, &crm, &delivered(record(200)))
                    .await
                    .unwrap();
            }
            id if id == failed => {
                s.fail(&lease, &FailureReason::Status(410), &record(410))
                    .await
                    .unwrap();
            }
            _ => held = Some(c),
        }
    }
    let held = held.expect("the task in flight");
    assert_eq!(held.task.id, in_flight);
    let mut waiting = Vec::new();
    for n in 0..3 {
        waiting.push(scheduled(h, "clinic-a", &format!("w{n}"), &crm, Region::EU).await);
    }
    let other_destination = scheduled(h, "clinic-a", "o1", &sms, Region::EU).await;
    let other_tenant = scheduled(h, "clinic-b", "o2", &crm, Region::EU).await;
    let other_region = scheduled(h, "clinic-a", "o3", &us, Region::US).await;
    // Cancelled by hand before: not counted again.
    let by_hand = scheduled(h, "clinic-a", "by-hand", &crm, Region::EU).await;
    assert!(matches!(
        s.cancel(by_hand, "cli").await.unwrap(),
        Cancel::Cancelled(_)
    ));

    h.clock().advance(Duration::seconds(1));
    let created = s
        .create_job(cancel_job(Region::EU, by_tenant_and_destination(&crm)))
        .await
        .unwrap();
    assert_eq!(
        (
            created.action,
            created.replayed,
            created.cursor,
            created.finished()
        ),
        (JobAction::Cancel, 0, None, false)
    );
    // Scheduled after the job was made: not swept in.
    h.clock().advance(Duration::seconds(1));
    let late = scheduled(h, "clinic-a", "late", &crm, Region::EU).await;

    // In id order: the task in flight and the one waiting for a retry
    // first (the ended ones are not taken), then the waiting ones.
    let first = s.advance_job(created.id, 2).await.unwrap();
    assert_eq!(
        (first.replayed, first.cursor, first.finished()),
        (2, Some(retrying), false)
    );
    // Another process (a restart) carries on from the recorded cursor.
    let restarted = h.with_key(test_key()).await;
    let listed = restarted.jobs(Region::EU, true, 10).await.unwrap();
    assert_eq!(listed, vec![first.clone()]);
    let second = restarted.advance_job(created.id, 2).await.unwrap();
    assert_eq!(
        (second.replayed, second.cursor, second.finished()),
        (4, Some(waiting[1]), false)
    );
    let last = restarted.advance_job(created.id, 2).await.unwrap();
    let now = h.clock().now_param().unwrap();
    assert_eq!(
        (last.replayed, last.cursor, last.finished_at),
        (5, Some(waiting[2]), Some(now)),
        "a short batch finishes the job"
    );
    let again = restarted.advance_job(created.id, 2).await.unwrap();
    assert_eq!(again, last, "a finished job stays as it is");
    assert_eq!(s.job(created.id).await.unwrap(), Some(last));

    for id in waiting.iter().chain([&retrying]) {
        let t = row(h, *id).await;
        assert_eq!(t.state, TaskState::Cancelled, "{id}");
        assert_eq!(t.finalized_at, Some(now));
        let cancelled = t.cancelled.expect("who cancelled");
        assert_eq!((cancelled.by.as_str(), cancelled.at), ("tok_ops", now));
    }
    // The task in flight keeps its lease and waits for its attempt.
    let t = row(h, in_flight).await;
    assert_eq!(
        (t.state, t.waiting_change),
        (TaskState::Leased, Some(WaitingChange::Cancel))
    );
    assert_eq!(t.cancelled.map(|c| c.by), Some("tok_ops".to_owned()));
    let outcome = s
        .finish(&held.lease(), &crm, &retry_at(h.clock(), now, record(503)))
        .await
        .unwrap();
    assert_eq!(outcome, TransitionOutcome::Applied);
    assert_eq!(s.settle_changes(Region::EU, 10).await.unwrap(), 1);
    assert_eq!(row(h, in_flight).await.state, TaskState::Cancelled);

    for id in [other_destination, other_tenant, other_region, late] {
        let t = row(h, id).await;
        assert_eq!((t.state, t.cancelled), (TaskState::Pending, None), "{id}");
    }
    assert_eq!(row(h, sent).await.state, TaskState::Delivered);
    let failed = row(h, failed).await;
    assert_eq!((failed.state, failed.cancelled), (TaskState::Failed, None));
    assert_eq!(
        row(h, by_hand).await.cancelled.map(|c| c.by),
        Some("cli".to_owned()),
        "a task cancelled before keeps who cancelled it"
    );
    h.clock().advance(Duration::hours(1));
    let claimed: Vec<TaskId> = s
        .claim_due(&claim(Region::EU, "cancel-test", 10))
        .await
        .unwrap()
        .iter()
        .map(|c| c.task.id)
        .collect();
    let mut expected = vec![other_destination, other_tenant, late];
    expected.sort_unstable();
    let mut claimed = claimed;
    claimed.sort_unstable();
    assert_eq!(claimed, expected, "no cancelled task is claimed");
}

pub async fn a_cancel_job_filters_by_reminder_and_time<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let early = scheduled(h, "clinic-a", "early", &crm, Region::EU).await;
    let mut new = new_task("later", &crm, Region::EU);
    new.tenant_id = TenantId::new("clinic-a").unwrap();
    new.not_before = t0() + Duration::days(2);
    let later = s.schedule(new).await.unwrap().task.id;
    h.clock().advance(Duration::seconds(1));

    let by_reminder = s
        .create_job(cancel_job(
            Region::EU,
            JobFilter {
                tenant: Some(TenantId::new("clinic-a").unwrap()),
                reminder: Some(remit::domain::ReminderId::new("early").unwrap()),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = s.advance_job(by_reminder.id, 200).await.unwrap();
    assert_eq!((done.replayed, done.finished()), (1, true));
    assert_eq!(row(h, early).await.state, TaskState::Cancelled);
    assert_eq!(row(h, later).await.state, TaskState::Pending);

    let before_due = s
        .create_job(cancel_job(
            Region::EU,
            JobFilter {
                until: Some(t0() + Duration::days(2)),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = s.advance_job(before_due.id, 200).await.unwrap();
    assert_eq!(
        (done.replayed, done.finished()),
        (0, true),
        "due at t0 + 2 days, which `until` leaves out"
    );
    assert_eq!(row(h, later).await.state, TaskState::Pending);

    let from_then = s
        .create_job(cancel_job(
            Region::EU,
            JobFilter {
                from: Some(t0() + Duration::days(2)),
                until: Some(t0() + Duration::days(3)),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = s.advance_job(from_then.id, 200).await.unwrap();
    assert_eq!((done.replayed, done.finished()), (1, true));
    assert_eq!(row(h, later).await.state, TaskState::Cancelled);
}

pub async fn a_cancel_job_is_refused_a_reason_or_no_filter<H: Harness>(h: &H) {
    let s = h.store();
    let refused = |field: &'static str, filter: JobFilter| {
        let job = cancel_job(Region::EU, filter);
        async move {
            match s.create_job(job).await {
                Err(StoreError::Invalid(e)) => assert_eq!(e.field, field),
                other => panic!("expected a refusal naming {field}, got {other:?}"),
            }
        }
    };
    // Only a failed task has a failure reason: a cancel never takes one.
    refused(
        "reason",
        JobFilter {
            reason: Some("max_attempts".into()),
            ..JobFilter::default()
        },
    )
    .await;
    refused(
        "reason",
        JobFilter {
            tenant: Some(TenantId::new("clinic-a").unwrap()),
            reason: Some("max_attempts".into()),
            ..JobFilter::default()
        },
    )
    .await;
    // No filter at all would cancel every task of the region.
    refused("filter", JobFilter::default()).await;
    refused(
        "until",
        JobFilter {
            from: Some(t0()),
            until: Some(t0()),
            ..JobFilter::default()
        },
    )
    .await;
    assert!(s.jobs(Region::EU, false, 10).await.unwrap().is_empty());
}

pub async fn cancel_and_replay_jobs_are_listed_together_each_with_its_action<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let pending = scheduled(h, "clinic-a", "pending", &crm, Region::EU).await;
    let by_destination = JobFilter {
        destination: Some(crm.clone()),
        ..JobFilter::default()
    };
    h.clock().advance(Duration::seconds(1));
    let replay = s
        .create_job(NewJob {
            action: JobAction::Replay,
            ..cancel_job(Region::EU, by_destination.clone())
        })
        .await
        .unwrap();
    h.clock().advance(Duration::seconds(1));
    let cancel = s
        .create_job(cancel_job(Region::EU, by_destination))
        .await
        .unwrap();
    let listed: Vec<(uuid::Uuid, JobAction)> = s
        .jobs(Region::EU, false, 10)
        .await
        .unwrap()
        .iter()
        .map(|j| (j.id, j.action))
        .collect();
    assert_eq!(
        listed,
        vec![
            (cancel.id, JobAction::Cancel),
            (replay.id, JobAction::Replay)
        ]
    );
    // The replay takes only failed tasks: the pending one is left to the
    // cancel.
    let replayed = s.advance_job(replay.id, 10).await.unwrap();
    assert_eq!(
        (replayed.action, replayed.replayed, replayed.finished()),
        (JobAction::Replay, 0, true)
    );
    assert_eq!(row(h, pending).await.state, TaskState::Pending);
    let cancelled = s.advance_job(cancel.id, 10).await.unwrap();
    assert_eq!(
        (cancelled.action, cancelled.replayed, cancelled.finished()),
        (JobAction::Cancel, 1, true)
    );
    assert_eq!(
        s.job(cancel.id).await.unwrap().map(|j| j.action),
        Some(JobAction::Cancel)
    );
}

pub async fn a_cancel_job_ending_a_lines_head_lets_the_line_go_on<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let line = OrderingKey::new("patient-7").unwrap();
    let mut ids = Vec::new();
    for (n, reminder) in ["first", "second"].iter().enumerate() {
        let mut new = new_task(reminder, &crm, Region::EU);
        new.ordering_key = Some(line.clone());
        new.not_before = t0() + Duration::minutes(n as i64);
        ids.push(s.schedule(new).await.unwrap().task.id);
    }
    h.clock().advance(Duration::seconds(1));
    let job = s
        .create_job(cancel_job(
            Region::EU,
            JobFilter {
                tenant: Some(TenantId::new("clinic-1").unwrap()),
                reminder: Some(remit::domain::ReminderId::new("first").unwrap()),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = s.advance_job(job.id, 10).await.unwrap();
    assert_eq!((done.replayed, done.finished()), (1, true));
    h.clock().advance(Duration::hours(1));
    let claimed: Vec<TaskId> = s
        .claim_due(&claim(Region::EU, "cancel-test", 10))
        .await
        .unwrap()
        .iter()
        .map(|c| c.task.id)
        .collect();
    assert_eq!(
        claimed,
        vec![ids[1]],
        "the task behind the cancelled head goes"
    );
}
