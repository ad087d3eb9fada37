//! `remit cancel --filter`: a bulk cancel by filter, worked to the end by
//! the command itself; `--job` reports it again; bad filters exit 2 naming
//! the key; the one-task forms still work beside it.

use chrono::{Duration, Utc};
use remit::domain::{DestinationId, Region, TaskId, TaskState, WaitingChange};
use remit::store::{Leases, Schedule};

use crate::support::{self, TestDb};

async fn destination(db: &TestDb, id: &str) -> DestinationId {
    support::destination(db, id, Region::EU, "http://127.0.0.1:9/", None).await
}

/// A task of `destination` (eu) due tomorrow: waiting, never claimed here.
async fn waiting(db: &TestDb, reminder: &str, destination: &DestinationId) -> TaskId {
    support::task_at(
        db,
        reminder,
        destination,
        Region::EU,
        Utc::now() + Duration::days(1),
    )
    .await
}

async fn task(db: &TestDb, id: TaskId) -> remit::domain::Task {
    db.store.task(id).await.unwrap().unwrap()
}

#[actix_rt::test]
async fn cancel_by_filter_cancels_the_matching_tasks_and_reports_the_job() {
    let db = TestDb::with_database_clock().await;
    let crm = destination(&db, "crm").await;
    let sms = destination(&db, "sms").await;
    // One in flight (claimed by another process, due now).
    let in_flight = support::task(&db, "held", &crm, Region::EU).await;
    let claimed = db
        .store
        .claim_due(&support::db::claim(Region::EU, "elsewhere", 1))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    let mut matching = Vec::new();
    for n in 0..3 {
        matching.push(waiting(&db, &format!("c{n}"), &crm).await);
    }
    let other = waiting(&db, "s0", &sms).await;

    let output = super::run(super::remit(&db).args([
        "cancel",
        "--region",
        "eu",
        "--filter",
        "destination=crm",
        "--filter",
        "tenant=clinic-1",
    ]));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let id = stdout
        .strip_prefix("bulk cancel ")
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_owned();
    assert_eq!(stdout, format!("bulk cancel {id}: cancelled 4 tasks\n"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("recorded bulk cancel"), "{stderr}");
    assert!(stderr.contains("cancelled 4 so far"), "{stderr}");
    for id in &matching {
        let t = task(&db, *id).await;
        assert_eq!(t.state, TaskState::Cancelled);
        assert_eq!(t.cancelled.map(|c| c.by), Some("cli".to_owned()));
    }
    let held = task(&db, in_flight).await;
    assert_eq!(
        (held.state, held.waiting_change),
        (TaskState::Leased, Some(WaitingChange::Cancel)),
        "cancelled after its attempt"
    );
    assert_eq!(task(&db, other).await.state, TaskState::Pending);

    let again = super::run(super::remit(&db).args(["cancel", "--region", "eu", "--job", &id]));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        stdout,
        "a finished job is reported"
    );
    // Not a replay, and not another region's.
    for (args, named) in [
        (
            vec!["replay", "--region", "eu", "--job", &id],
            "is a bulk cancel",
        ),
        (
            vec!["cancel", "--region", "us", "--job", &id],
            "no bulk cancel with id",
        ),
    ] {
        let refused = super::remit(&db).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }

    // The one-task form beside it.
    let output = super::run(super::remit(&db).args(["cancel", "--task", &other.0.to_string()]));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("cancelled task {other}\n")
    );
}

#[actix_rt::test]
async fn cancel_refuses_bad_filters_with_exit_2() {
    let db = TestDb::with_database_clock().await;
    for (args, named) in [
        (vec!["cancel"], "--filter"),
        (
            vec!["cancel", "--filter", "reason=max_attempts"],
            "--filter reason",
        ),
        (
            vec!["cancel", "--filter", "colour=red"],
            "tenant, reminder, destination, from, until",
        ),
        (vec!["cancel", "--filter", "tenant"], "KEY=VALUE"),
        (
            vec!["cancel", "--filter", "from=yesterday"],
            "--filter from",
        ),
        (
            vec![
                "cancel",
                "--filter",
                "from=2026-10-02T00:00:00Z",
                "--filter",
                "until=2026-10-01T00:00:00Z",
            ],
            "--filter until",
        ),
        (
            vec!["cancel", "--filter", "tenant=a", "--filter", "tenant=b"],
            "twice",
        ),
        (
            vec!["cancel", "--task", "x", "--filter", "tenant=a"],
            "cannot be used with",
        ),
        (vec!["cancel", "--job", "nope"], "--job"),
    ] {
        let output = super::remit(&db).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(named),
            "{args:?} should name {named}: {stderr}"
        );
    }
}
