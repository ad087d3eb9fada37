//! `remit replay`: a bulk replay by filter, worked to the end by the
//! command itself; `--job` reports it again; bad filters exit 2 naming
//! the key.

use remit::domain::{AttemptRecord, FailureReason, Region, TaskId, TaskState};
use remit::store::{Destinations, Leases, Schedule};

use crate::support::{self, TestDb};

/// A task of `destination` (eu) that has failed for good.
async fn failed(db: &TestDb, reminder: &str, destination: &str) -> TaskId {
    let dest = remit::domain::DestinationId::new(destination).unwrap();
    if db.store.destination(&dest).await.unwrap().is_none() {
        support::destination(db, destination, Region::EU, "http://127.0.0.1:9/", None).await;
    }
    let id = support::task(db, reminder, &dest, Region::EU).await;
    let claimed = db
        .store
        .claim_due(&support::db::claim(Region::EU, "elsewhere", 1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    db.store
        .fail(
            &claimed[0].lease(),
            &FailureReason::Status(410),
            &AttemptRecord::default(),
        )
        .await
        .unwrap();
    id
}

async fn state(db: &TestDb, id: TaskId) -> TaskState {
    db.store.task(id).await.unwrap().unwrap().state
}

#[actix_rt::test]
async fn replay_by_filter_replays_the_matching_failed_tasks_and_reports_the_job() {
    let db = TestDb::with_database_clock().await;
    let mut crm = Vec::new();
    for n in 0..3 {
        crm.push(failed(&db, &format!("c{n}"), "crm").await);
    }
    let sms = failed(&db, "s0", "sms").await;

    let output = super::run(super::remit(&db).args([
        "replay",
        "--region",
        "eu",
        "--filter",
        "destination=crm",
        "--filter",
        "tenant=clinic-1",
    ]));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let id = stdout
        .strip_prefix("bulk replay ")
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_owned();
    assert_eq!(
        stdout,
        format!("bulk replay {id}: replayed 3 failed tasks\n")
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("replayed 3 so far"));
    for id in &crm {
        assert_eq!(state(&db, *id).await, TaskState::Pending);
    }
    assert_eq!(state(&db, sms).await, TaskState::Failed);

    let again = super::run(super::remit(&db).args(["replay", "--region", "eu", "--job", &id]));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        stdout,
        "a finished job is reported"
    );
    // Another region's host does not see the job: a region's tasks are
    // worked only where that region is served.
    let elsewhere = super::remit(&db)
        .args(["replay", "--region", "us", "--job", &id])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&elsewhere.stderr);
    assert_eq!(elsewhere.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no bulk replay with id"), "{stderr}");
}

#[actix_rt::test]
async fn replay_refuses_bad_filters_with_exit_2() {
    let db = TestDb::with_database_clock().await;
    for (args, named) in [
        (vec!["replay"], "--filter"),
        (
            vec!["replay", "--filter", "colour=red"],
            "tenant, reminder, destination, reason, from, until",
        ),
        (vec!["replay", "--filter", "tenant"], "KEY=VALUE"),
        (
            vec!["replay", "--filter", "from=yesterday"],
            "--filter from",
        ),
        (
            vec!["replay", "--filter", "tenant=a", "--filter", "tenant=b"],
            "twice",
        ),
        (vec!["replay", "--job", "nope"], "--job"),
    ] {
        let mut command = super::remit(&db);
        command.args(&args);
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(named),
            "{args:?} should name {named}: {stderr}"
        );
    }
}
