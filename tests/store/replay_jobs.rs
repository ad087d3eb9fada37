//! Bulk replays on both stores: exactly the matching failed tasks go back
//! to `pending`, a job's cursor outlives the process that started it, and
//! two processes advancing one job never count a task twice.

use chrono::Duration;
use remit::domain::{
    AttemptRecord, DestinationId, FailureReason, Region, TaskId, TaskState, TenantId,
};
use remit::store::console::{NewReplayJob, ReplayFilter};
use remit::store::ReplayJobs;
use remit::store::{Database, Store};

use crate::support::{new_task, test_key, Backend, TestDb};

async fn failed_task(
    db: &TestDb,
    tenant: &str,
    reminder: &str,
    dest: &DestinationId,
    region: Region,
) -> TaskId {
    let mut new = new_task(reminder, dest, region);
    new.tenant_id = TenantId::new(tenant).unwrap();
    let id = db.store.schedule(new).await.unwrap().task.id;
    let claimed = db.claim(region, "replay-test", 1000).await;
    for c in claimed {
        db.store
            .fail(
                &c.lease(),
                &FailureReason::Status(410),
                &AttemptRecord::default(),
            )
            .await
            .unwrap();
    }
    id
}

async fn state(store: &Database, id: TaskId) -> TaskState {
    store.task(id).await.unwrap().unwrap().state
}

fn job(region: Region, filter: ReplayFilter) -> NewReplayJob {
    NewReplayJob {
        region,
        filter,
        requested_by: "cli".into(),
        horizon: Duration::hours(6),
    }
}

#[tokio::test]
async fn replay_job_replays_exactly_the_matching_failed_tasks_on_postgres() {
    replays_exactly_the_matching(Backend::Postgres).await;
}

#[tokio::test]
async fn replay_job_replays_exactly_the_matching_failed_tasks_on_sqlite() {
    replays_exactly_the_matching(Backend::Sqlite).await;
}

async fn replays_exactly_the_matching(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    let sms = db.destination("sms", Region::EU).await;
    let us = db.destination("crm-us", Region::US).await;
    let mut matching = Vec::new();
    for n in 0..3 {
        matching.push(failed_task(&db, "clinic-a", &format!("m{n}"), &crm, Region::EU).await);
    }
    let other_destination = failed_task(&db, "clinic-a", "o1", &sms, Region::EU).await;
    let other_tenant = failed_task(&db, "clinic-b", "o2", &crm, Region::EU).await;
    let other_region = failed_task(&db, "clinic-a", "o3", &us, Region::US).await;
    // Delivered: never replayed.
    let mut new = new_task("d1", &crm, Region::EU);
    new.tenant_id = TenantId::new("clinic-a").unwrap();
    let delivered = db.store.schedule(new).await.unwrap().task.id;
    let c = db.claim(Region::EU, "replay-test", 10).await;
    db.store
        .finish(
            &c[0].lease(),
            &crm,
            &crate::support::delivered(AttemptRecord::default()),
        )
        .await
        .unwrap();

    db.clock().advance(Duration::seconds(1));
    let created = db
        .store
        .create_replay_job(job(
            Region::EU,
            ReplayFilter {
                tenant: Some(TenantId::new("clinic-a").unwrap()),
                destination: Some(crm.clone()),
                ..ReplayFilter::default()
            },
        ))
        .await
        .unwrap();
    assert_eq!(
        (created.replayed, created.cursor, created.finished()),
        (0, None, false)
    );
    // Fails after the job was made: not swept in.
    db.clock().advance(Duration::seconds(1));
    let late = failed_task(&db, "clinic-a", "late", &crm, Region::EU).await;

    let first = db.store.advance_replay_job(created.id, 2).await.unwrap();
    assert_eq!((first.replayed, first.finished()), (2, false));
    assert_eq!(first.cursor, Some(matching[1]));

    // Another process (a restart) carries on from the recorded cursor.
    let restarted = db.another_store(test_key()).await;
    let listed = restarted.replay_jobs(Region::EU, true, 10).await.unwrap();
    assert_eq!(
        listed.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![created.id]
    );
    let second = restarted.advance_replay_job(created.id, 2).await.unwrap();
    assert_eq!((second.replayed, second.finished()), (3, true));
    assert!(restarted
        .replay_jobs(Region::EU, true, 10)
        .await
        .unwrap()
        .is_empty());
    let again = restarted.advance_replay_job(created.id, 2).await.unwrap();
    assert_eq!(again, second, "a finished job stays as it is");
    assert_eq!(
        restarted.replay_job(created.id).await.unwrap(),
        Some(second.clone())
    );

    for id in &matching {
        let task = db.store.task(*id).await.unwrap().unwrap();
        assert_eq!(task.state, TaskState::Pending);
        assert_eq!(
            task.retry_horizon_at,
            db.clock().now_param().unwrap() + Duration::hours(6) - Duration::seconds(0)
        );
    }
    for id in [other_destination, other_tenant, late] {
        assert_eq!(state(&db.store, id).await, TaskState::Failed);
    }
    assert_eq!(state(&db.store, other_region).await, TaskState::Failed);
    assert_eq!(state(&db.store, delivered).await, TaskState::Delivered);
}

#[tokio::test]
async fn replay_job_filters_by_reason_and_time_on_postgres() {
    filters_by_reason_and_time(Backend::Postgres).await;
}

#[tokio::test]
async fn replay_job_filters_by_reason_and_time_on_sqlite() {
    filters_by_reason_and_time(Backend::Sqlite).await;
}

async fn filters_by_reason_and_time(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    let a = failed_task(&db, "clinic-a", "a", &crm, Region::EU).await;
    let reason = db
        .store
        .task(a)
        .await
        .unwrap()
        .unwrap()
        .failure_reason
        .unwrap();
    let nothing = db
        .store
        .create_replay_job(job(
            Region::EU,
            ReplayFilter {
                reason: Some("retry_horizon".into()),
                ..ReplayFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = db.store.advance_replay_job(nothing.id, 200).await.unwrap();
    assert_eq!((done.replayed, done.finished()), (0, true));
    assert_eq!(state(&db.store, a).await, TaskState::Failed);

    let before_due = db
        .store
        .create_replay_job(job(
            Region::EU,
            ReplayFilter {
                reason: Some(reason.clone()),
                until: Some(crate::support::t0()),
                ..ReplayFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = db
        .store
        .advance_replay_job(before_due.id, 200)
        .await
        .unwrap();
    assert_eq!(done.replayed, 0, "due at t0, which `until` leaves out");

    let matching = db
        .store
        .create_replay_job(job(
            Region::EU,
            ReplayFilter {
                reason: Some(reason),
                from: Some(crate::support::t0()),
                ..ReplayFilter::default()
            },
        ))
        .await
        .unwrap();
    let done = db.store.advance_replay_job(matching.id, 200).await.unwrap();
    assert_eq!((done.replayed, done.finished()), (1, true));
    assert_eq!(state(&db.store, a).await, TaskState::Pending);
}

#[tokio::test]
async fn replay_job_is_refused_with_the_field_named_on_postgres() {
    refused_with_the_field_named(Backend::Postgres).await;
}

#[tokio::test]
async fn replay_job_is_refused_with_the_field_named_on_sqlite() {
    refused_with_the_field_named(Backend::Sqlite).await;
}

async fn refused_with_the_field_named(backend: Backend) {
    let db = TestDb::on(backend).await;
    let t = crate::support::t0();
    let backwards = job(
        Region::EU,
        ReplayFilter {
            from: Some(t),
            until: Some(t),
            ..ReplayFilter::default()
        },
    );
    match db.store.create_replay_job(backwards).await {
        Err(remit::store::StoreError::Invalid(e)) => assert_eq!(e.field, "until"),
        other => panic!("expected a refusal naming until, got {other:?}"),
    }
    // No filter at all would replay every failed task of the region: the
    // store refuses it, whoever asks.
    match db
        .store
        .create_replay_job(job(Region::EU, ReplayFilter::default()))
        .await
    {
        Err(remit::store::StoreError::Invalid(e)) => assert_eq!(e.field, "filter"),
        other => panic!("expected a refusal naming filter, got {other:?}"),
    }
    let missing = db.store.advance_replay_job(uuid::Uuid::now_v7(), 10).await;
    assert!(
        matches!(missing, Err(remit::store::StoreError::NotFound { .. })),
        "{missing:?}"
    );
}

#[tokio::test]
async fn replay_job_two_advancers_do_not_double_count_on_postgres() {
    two_advancers(Backend::Postgres).await;
}

#[tokio::test]
async fn replay_job_two_advancers_do_not_double_count_on_sqlite() {
    two_advancers(Backend::Sqlite).await;
}

async fn two_advancers(backend: Backend) {
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    let mut failed = Vec::new();
    for n in 0..40 {
        let mut new = new_task(&format!("r{n}"), &crm, Region::EU);
        new.tenant_id = TenantId::new("clinic-a").unwrap();
        failed.push(db.store.schedule(new).await.unwrap().task.id);
    }
    for c in db.claim(Region::EU, "replay-test", 100).await {
        db.store
            .fail(
                &c.lease(),
                &FailureReason::Status(410),
                &AttemptRecord::default(),
            )
            .await
            .unwrap();
    }
    db.clock().advance(Duration::seconds(1));
    let created = db
        .store
        .create_replay_job(job(
            Region::EU,
            ReplayFilter {
                tenant: Some(TenantId::new("clinic-a").unwrap()),
                ..ReplayFilter::default()
            },
        ))
        .await
        .unwrap();
    let one = db.another_store(test_key()).await;
    let two = db.another_store(test_key()).await;
    let work = |store: Database| async move {
        let mut seen = Vec::new();
        loop {
            let job = store.advance_replay_job(created.id, 3).await.unwrap();
            seen.push(job.replayed);
            if job.finished() {
                return seen;
            }
        }
    };
    let (a, b) = tokio::join!(work(one), work(two));
    let end = db.store.replay_job(created.id).await.unwrap().unwrap();
    assert_eq!(end.replayed, 40, "every task counted once: {a:?} {b:?}");
    // Each batch moved the count on from what the one before it left: had
    // two advancers replayed the same tasks, one of them would have seen a
    // count the other saw too.
    let mut progress: Vec<i64> = a.iter().chain(&b).copied().filter(|&n| n < 40).collect();
    progress.sort_unstable();
    let distinct = progress.len();
    progress.dedup();
    assert_eq!(progress.len(), distinct, "a count seen twice: {a:?} {b:?}");
    assert!(end.finished());
    for id in failed {
        assert_eq!(state(&db.store, id).await, TaskState::Pending);
    }
}
