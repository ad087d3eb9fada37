//! A bulk replay recorded while a region's runtime runs is picked up by
//! its replay job runner and worked to the end: every matching failed task
//! is sent again and delivered, and nothing else is touched.

use remit::store::{Jobs, Schedule};
use std::time::Duration;

use remit::domain::{Region, TaskState, TenantId};
use remit::store::{JobAction, JobFilter, NewJob};

use crate::support::{self, Backend, Receiver, Reply, TestDb};

#[actix_rt::test]
async fn a_bulk_replay_is_worked_to_the_end_while_the_runtime_runs_on_postgres() {
    worked_to_the_end(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_bulk_replay_is_worked_to_the_end_while_the_runtime_runs_on_sqlite() {
    worked_to_the_end(Backend::Sqlite).await;
}

async fn worked_to_the_end(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    // Every first attempt is refused for good (410); later ones accepted.
    receiver.script("/crm", vec![Reply::status(410); 3], Reply::ok());
    receiver.script("/sms", vec![Reply::status(410)], Reply::ok());
    let crm = support::destination(&db, "crm", Region::EU, &receiver.url("/crm"), None).await;
    let sms = support::destination(&db, "sms", Region::EU, &receiver.url("/sms"), None).await;
    let mut matching = Vec::new();
    for n in 0..3 {
        matching.push(support::task(&db, &format!("c{n}"), &crm, Region::EU).await);
    }
    let other = support::task(&db, "s0", &sms, Region::EU).await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let mut all = matching.clone();
    all.push(other);
    support::wait_for_state(&db, &all, TaskState::Failed, Duration::from_secs(10)).await;

    let job = db
        .store
        .create_job(NewJob {
            region: Region::EU,
            action: JobAction::Replay,
            filter: JobFilter {
                destination: Some(crm.clone()),
                tenant: Some(TenantId::new("clinic-1").unwrap()),
                ..JobFilter::default()
            },
            requested_by: "cli".into(),
            horizon: chrono::Duration::hours(1),
        })
        .await
        .unwrap();
    support::wait_for_state(
        &db,
        &matching,
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let done = loop {
        let now = db.store.job(job.id).await.unwrap().unwrap();
        if now.finished() {
            break now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not finished: {now:?}"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    };
    runtime.shutdown().await;

    assert_eq!(done.replayed, 3);
    assert_eq!(
        db.store.task(other).await.unwrap().unwrap().state,
        TaskState::Failed
    );
    assert_eq!(
        receiver.requests_to("/sms").len(),
        1,
        "the other destination's task stays failed"
    );
    assert_eq!(
        receiver.requests_to("/crm").len(),
        6,
        "each matching task sent once more"
    );
}
