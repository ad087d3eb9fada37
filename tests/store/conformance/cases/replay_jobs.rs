//! Bulk replays: exactly the matching failed tasks go back to `pending`,
//! a job's cursor outlives the process that started it, and a job no
//! store should record is refused.

use remit::domain::TenantId;
use remit::store::{JobAction, JobFilter, Jobs, Leases, NewJob, Schedule};

use super::*;
use crate::support::test_key;

/// A task of `tenant` that has failed for good.
async fn failed_task<H: Harness>(
    h: &H,
    tenant: &str,
    reminder: &str,
    d: &DestinationId,
    region: Region,
) -> TaskId {
    let s = h.store();
    let mut new = new_task(reminder, d, region);
    new.tenant_id = TenantId::new(tenant).unwrap();
    let id = s.schedule(new).await.unwrap().task.id;
    for c in s
        .claim_due(&claim(region, "replay-test", 1000))
        .await
        .unwrap()
    {
        s.fail(
            &c.lease(),
            &FailureReason::Status(410),
            &AttemptRecord::default(),
        )
        .await
        .unwrap();
    }
    id
}

async fn state<H: Harness>(h: &H, id: TaskId) -> TaskState {
    h.store().task(id).await.unwrap().unwrap().state
}

fn job(region: Region, filter: JobFilter) -> NewJob {
    NewJob {
        region,
        action: JobAction::Replay,
        filter,
        requested_by: "cli".into(),
        horizon: Duration::hours(6),
    }
}

pub async fn a_replay_job_replays_exactly_the_matching_failed_tasks<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let sms = destination(h, "sms", Region::EU).await;
    let us = destination(h, "crm-us", Region::US).await;
    let mut matching = Vec::new();
    for n in 0..3 {
        matching.push(failed_task(h, "clinic-a", &format!("m{n}"), &crm, Region::EU).await);
    }
    let other_destination = failed_task(h, "clinic-a", "o1", &sms, Region::EU).await;
    let other_tenant = failed_task(h, "clinic-b", "o2", &crm, Region::EU).await;
    let other_region = failed_task(h, "clinic-a", "o3", &us, Region::US).await;
    // Delivered: never replayed.
    let mut new = new_task("d1", &crm, Region::EU);
    new.tenant_id = TenantId::new("clinic-a").unwrap();
    let delivered_task = s.schedule(new).await.unwrap().task.id;
    let c = s
        .claim_due(&claim(Region::EU, "replay-test", 10))
        .await
        .unwrap();
    s.finish(&c[0].lease(), &crm, &delivered(AttemptRecord::default()))
        .await
        .unwrap();

    h.clock().advance(Duration::seconds(1));
    let created = s
        .create_job(job(
            Region::EU,
            JobFilter {
                tenant: Some(TenantId::new("clinic-a").unwrap()),
                destination: Some(crm.clone()),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    assert_eq!(
        (created.replayed, created.cursor, created.finished()),
        (0, None, false)
    );
    // Fails after the job was made: not swept in.
    h.clock().advance(Duration::seconds(1));
    let late = failed_task(h, "clinic-a", "late", &crm, Region::EU).await;

    let first = s.advance_job(created.id, 2).await.unwrap();
    assert_eq!((first.replayed, first.finished()), (2, false));
    assert_eq!(first.cursor, Some(matching[1]));

    // Another process (a restart) carries on from the recorded cursor.
    let restarted = h.with_key(test_key()).await;
    let listed = restarted.jobs(Region::EU, true, 10).await.unwrap();
    assert_eq!(
        listed.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![created.id]
    );
    let second = restarted.advance_job(created.id, 2).await.unwrap();
    assert_eq!((second.replayed, second.finished()), (3, true));
    assert!(restarted
        .jobs(Region::EU, true, 10)
        .await
        .unwrap()
        .is_empty());
    let again = restarted.advance_job(created.id, 2).await.unwrap();
    assert_eq!(again, second, "a finished job stays as it is");
    assert_eq!(
        restarted.job(created.id).await.unwrap(),
        Some(second.clone())
    );

    for id in &matching {
        let task = s.task(*id).await.unwrap().unwrap();
        assert_eq!(task.state, TaskState::Pending);
        assert_eq!(
            task.retry_horizon_at,
            h.clock().now_param().unwrap() + Duration::hours(6)
        );
    }
    for id in [other_destination, other_tenant, late, other_region] {
        assert_eq!(state(h, id).await, TaskState::Failed);
    }
    assert_eq!(state(h, delivered_task).await, TaskState::Delivered);
}

pub async fn a_replay_job_filters_by_reason_and_time<H: Harness>(h: &H) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let a = failed_task(h, "clinic-a", "a", &crm, Region::EU).await;
    let reason = s.task(a).await.unwrap().unwrap().failure_reason.unwrap();
    let nothing = s
        .create_job(job(
            Region::EU,
            JobFilter {
                reason: Some("retry_horizon".into()),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = s.advance_job(nothing.id, 200).await.unwrap();
    assert_eq!((done.replayed, done.finished()), (0, true));
    assert_eq!(state(h, a).await, TaskState::Failed);

    let before_due = s
        .create_job(job(
            Region::EU,
            JobFilter {
                reason: Some(reason.clone()),
                until: Some(t0()),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = s.advance_job(before_due.id, 200).await.unwrap();
    assert_eq!(done.replayed, 0, "due at t0, which `until` leaves out");

    let matching = s
        .create_job(job(
            Region::EU,
            JobFilter {
                reason: Some(reason),
                from: Some(t0()),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = s.advance_job(matching.id, 200).await.unwrap();
    assert_eq!((done.replayed, done.finished()), (1, true));
    assert_eq!(state(h, a).await, TaskState::Pending);
}

pub async fn a_replay_job_is_refused_with_the_field_named<H: Harness>(h: &H) {
    let s = h.store();
    let backwards = job(
        Region::EU,
        JobFilter {
            from: Some(t0()),
            until: Some(t0()),
            ..JobFilter::default()
        },
    );
    match s.create_job(backwards).await {
        Err(StoreError::Invalid(e)) => assert_eq!(e.field, "until"),
        other => panic!("expected a refusal naming until, got {other:?}"),
    }
    // No filter at all would replay every failed task of the region: the
    // store refuses it, whoever asks.
    match s.create_job(job(Region::EU, JobFilter::default())).await {
        Err(StoreError::Invalid(e)) => assert_eq!(e.field, "filter"),
        other => panic!("expected a refusal naming filter, got {other:?}"),
    }
    let missing = s.advance_job(uuid::Uuid::now_v7(), 10).await;
    assert!(
        matches!(missing, Err(StoreError::NotFound { .. })),
        "{missing:?}"
    );
}

pub async fn replay_jobs_are_listed_newest_first_and_count_only_what_they_replay<H: Harness>(
    h: &H,
) {
    let s = h.store();
    let crm = destination(h, "crm", Region::EU).await;
    let mut failed = Vec::new();
    for n in 0..3 {
        failed.push(failed_task(h, "clinic-a", &format!("f{n}"), &crm, Region::EU).await);
    }
    h.clock().advance(Duration::seconds(1));
    let by_destination = JobFilter {
        destination: Some(crm.clone()),
        ..JobFilter::default()
    };
    let older = s
        .create_job(NewJob {
            horizon: Duration::milliseconds(90_500),
            ..job(Region::EU, by_destination.clone())
        })
        .await
        .unwrap();
    assert_eq!(
        older.horizon,
        Duration::seconds(90),
        "kept in whole seconds"
    );
    assert_eq!(older.created_at, h.clock().now_param().unwrap());
    h.clock().advance(Duration::seconds(1));
    let newer = s
        .create_job(job(Region::EU, by_destination.clone()))
        .await
        .unwrap();
    let elsewhere = s.create_job(job(Region::US, by_destination)).await.unwrap();
    let ids =
        |jobs: Vec<remit::store::Job>| -> Vec<uuid::Uuid> { jobs.iter().map(|j| j.id).collect() };
    assert_eq!(
        ids(s.jobs(Region::EU, false, 10).await.unwrap()),
        vec![newer.id, older.id]
    );
    assert_eq!(
        ids(s.jobs(Region::EU, false, 1).await.unwrap()),
        vec![newer.id]
    );
    assert_eq!(
        ids(s.jobs(Region::US, false, 10).await.unwrap()),
        vec![elsewhere.id]
    );

    // One task replayed by hand before the job gets to it is not failed
    // any more: the job neither picks it nor counts it.
    assert!(matches!(
        s.replay(failed[0], Duration::hours(1)).await.unwrap(),
        Replayed::Replayed(_)
    ));
    h.clock().advance(Duration::seconds(1));
    let first = s.advance_job(older.id, 2).await.unwrap();
    assert_eq!(
        (first.replayed, first.cursor, first.finished()),
        (2, Some(failed[2]), false),
        "a full batch may have more after it"
    );
    let now = h.clock().now_param().unwrap();
    let task = s.task(failed[1]).await.unwrap().unwrap();
    assert_eq!(
        (task.state, task.available_at, task.retry_horizon_at),
        (TaskState::Pending, now, now + Duration::seconds(90))
    );
    let last = s.advance_job(older.id, 2).await.unwrap();
    assert_eq!(
        (last.replayed, last.cursor, last.finished_at),
        (2, Some(failed[2]), Some(now)),
        "an empty batch finishes the job and keeps the cursor"
    );
    assert_eq!(
        ids(s.jobs(Region::EU, true, 10).await.unwrap()),
        vec![newer.id]
    );
    let done = s.advance_job(newer.id, 0).await.unwrap();
    assert_eq!(
        (done.replayed, done.finished()),
        (0, true),
        "a batch of none is taken as one, and nothing failed is left"
    );
}
