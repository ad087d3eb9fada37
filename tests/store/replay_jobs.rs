//! Bulk replays and cancels across processes: two processes advancing one
//! job at once never count a task twice, a cancel's batches racing claims
//! and finishes included. What one store does with a job is a
//! conformance case (`conformance/cases/replay_jobs.rs`), run on every
//! store.

use chrono::Duration;
use remit::domain::{AttemptRecord, FailureReason, Region, TaskId, TaskState, TenantId};
use remit::store::{Database, JobAction, JobFilter, Jobs, Leases, NewJob, Schedule};

use crate::support::{new_task, test_key, Backend, TestDb};

async fn state(store: &Database, id: TaskId) -> TaskState {
    store.task(id).await.unwrap().unwrap().state
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
        .create_job(job(
            Region::EU,
            JobFilter {
                tenant: Some(TenantId::new("clinic-a").unwrap()),
                ..JobFilter::default()
            },
        ))
        .await
        .unwrap();
    let one = db.another_store(test_key()).await;
    let two = db.another_store(test_key()).await;
    let work = |store: Database| async move {
        let mut seen = Vec::new();
        loop {
            let job = store.advance_job(created.id, 3).await.unwrap();
            seen.push(job.replayed);
            if job.finished() {
                return seen;
            }
        }
    };
    let (a, b) = tokio::join!(work(one), work(two));
    let end = db.store.job(created.id).await.unwrap().unwrap();
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

fn cancel_by_tenant() -> NewJob {
    NewJob {
        action: JobAction::Cancel,
        requested_by: "tok_ops".into(),
        ..job(
            Region::EU,
            JobFilter {
                tenant: Some(TenantId::new("clinic-a").unwrap()),
                ..JobFilter::default()
            },
        )
    }
}

#[tokio::test]
async fn cancel_job_two_advancers_racing_claims_count_each_task_once_on_postgres() {
    cancel_racing(Backend::Postgres).await;
}

#[tokio::test]
async fn cancel_job_two_advancers_racing_claims_count_each_task_once_on_sqlite() {
    cancel_racing(Backend::Sqlite).await;
}

/// Two processes advance one bulk cancel while a third claims the tasks
/// and finishes them with a retry: each task is counted once, and every
/// one ends cancelled or waits to be (one in flight when its batch came).
async fn cancel_racing(backend: Backend) {
    const TASKS: usize = 60;
    let db = TestDb::on(backend).await;
    let crm = db.destination("crm", Region::EU).await;
    let mut ids = Vec::new();
    for n in 0..TASKS {
        let mut new = new_task(&format!("r{n}"), &crm, Region::EU);
        new.tenant_id = TenantId::new("clinic-a").unwrap();
        ids.push(db.store.schedule(new).await.unwrap().task.id);
    }
    db.clock().advance(Duration::seconds(1));
    let created = db.store.create_job(cancel_by_tenant()).await.unwrap();
    let one = db.another_store(test_key()).await;
    let two = db.another_store(test_key()).await;
    let claimer = db.another_store(test_key()).await;
    let work = |store: Database| async move {
        let mut seen = Vec::new();
        loop {
            let job = store.advance_job(created.id, 3).await.unwrap();
            seen.push(job.replayed);
            if job.finished() {
                return seen;
            }
        }
    };
    let clock = db.clock().clone();
    let claims = async move {
        let mut finished = 0;
        for _ in 0..20 {
            let claimed = claimer
                .claim_due(&crate::support::claim(Region::EU, "racer", 4))
                .await
                .unwrap();
            for c in claimed {
                let later = clock.now_param().unwrap() + Duration::hours(1);
                claimer
                    .finish(
                        &c.lease(),
                        &c.task.destination_id,
                        &crate::support::retry_at(&clock, later, AttemptRecord::default()),
                    )
                    .await
                    .unwrap();
                finished += 1;
            }
            tokio::task::yield_now().await;
        }
        finished
    };
    let (a, b, finished) = tokio::join!(work(one), work(two), claims);
    let end = db.store.job(created.id).await.unwrap().unwrap();
    assert!(end.finished());
    assert_eq!(
        end.replayed, TASKS as i64,
        "every task counted once ({finished} claimed and retried meanwhile): {a:?} {b:?}"
    );
    let mut progress: Vec<i64> = a
        .iter()
        .chain(&b)
        .copied()
        .filter(|&n| n < TASKS as i64)
        .collect();
    progress.sort_unstable();
    let distinct = progress.len();
    progress.dedup();
    assert_eq!(progress.len(), distinct, "a count seen twice: {a:?} {b:?}");
    for id in ids {
        let task = db.store.task(id).await.unwrap().unwrap();
        assert!(
            task.state == TaskState::Cancelled
                || task.waiting_change == Some(remit::domain::WaitingChange::Cancel),
            "{task:?}"
        );
        assert_eq!(task.cancelled.map(|c| c.by), Some("tok_ops".to_owned()));
    }
}
