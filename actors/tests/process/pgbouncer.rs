//! `remit` behind PgBouncer 1.18 in transaction mode, started by the test,
//! as operators run it: `remit migrate` over the direct URL, the commands
//! and `remit run` through the pooler with `database.pooler =
//! "transaction"`, every task delivered; a pooler remit was not told of,
//! and a migrate with nothing direct to use, refused at once by name.

use remit::store::{Database, DatabaseConfig, Schedule};
use std::process::Command;
use std::time::{Duration, Instant};

use remit::domain::{TaskId, TaskState};

use crate::support::pgbouncer::PgBouncer;
use crate::support::Receiver;
use remit_testkit::remit_command;

/// `remit` through the pooler, told that it is one and where PostgreSQL
/// itself is.
fn behind(bouncer: &PgBouncer) -> Command {
    let mut command = remit_command!(bouncer);
    command
        .env("REMIT_DATABASE__POOLER", "transaction")
        .env("REMIT_DATABASE__DIRECT_URL", &bouncer.direct_url);
    command
}

/// `remit schedule --file` of `reminders`, due now, to `crm` in `eu`,
/// through the pooler: the ids of the tasks.
fn schedule_file(bouncer: &PgBouncer, reminders: std::ops::Range<usize>) -> Vec<TaskId> {
    let now = chrono::Utc::now().to_rfc3339();
    let lines: String = reminders
        .map(|i| {
            format!(
                r#"{{"tenant_id":"clinic-1","reminder_id":"r{i}","destination_id":"crm","region":"eu","not_before":"{now}","payload":{{"n":{i}}}}}"#
            ) + "\n"
        })
        .collect();
    let output = super::run_with_stdin(
        behind(bouncer).args(["schedule", "--file", "-"]),
        lines.as_bytes(),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        bouncer.log()
    );
    stdout
        .lines()
        .filter_map(|line| line.split("task ").nth(1))
        .map(|rest| TaskId(rest.split_whitespace().next().unwrap().parse().unwrap()))
        .collect()
}

/// Waits until every task in `tasks` is delivered, read directly.
async fn wait_delivered(store: &Database, tasks: &[TaskId], within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let mut waiting = 0;
        for id in tasks {
            if store.task(*id).await.unwrap().unwrap().state != TaskState::Delivered {
                waiting += 1;
            }
        }
        if waiting == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{waiting} of {} tasks not delivered after {within:?}",
            tasks.len()
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
}

#[actix_rt::test]
async fn remit_delivers_end_to_end_through_a_transaction_pooler() {
    let Some(bouncer) = PgBouncer::start("").await else {
        return;
    };
    let receiver = Receiver::start();

    // Migrating needs a session of its own: refused, by name, without one.
    let output = remit_command!(bouncer)
        .env("REMIT_DATABASE__POOLER", "transaction")
        .arg("migrate")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("database.direct_url"), "{stderr}");
    super::run(behind(&bouncer).arg("migrate"));

    super::run(behind(&bouncer).args([
        "destination",
        "add",
        "--id",
        "crm",
        "--region",
        "eu",
        "--url",
        &receiver.url("/hook"),
    ]));
    // The command the issue saw fail with `prepared statement "s7"
    // already exists`.
    let mut tasks = schedule_file(&bouncer, 0..40);
    assert_eq!(tasks.len(), 40);

    // Through a pooler remit was not told of: refused at once, by name.
    let started = Instant::now();
    let output = remit_command!(bouncer)
        .args(["run", "--region", "eu"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        took < remit_testkit::db::FAILS_FAST,
        "took {took:?}: {stderr}"
    );
    eprintln!("remit run through a pooler it was not told of: {took:?}: {stderr}");
    assert!(
        stderr.contains("database.pooler") && stderr.contains("options"),
        "{stderr}"
    );

    let direct = Database::connect(
        &DatabaseConfig::new(bouncer.direct_url.clone()),
        crate::support::db::test_key(),
    )
    .await
    .unwrap();
    let child = behind(&bouncer)
        .args(["run", "--region", "eu"])
        .spawn()
        .unwrap();
    wait_delivered(&direct, &tasks, Duration::from_secs(30)).await;
    let status = super::run(behind(&bouncer).args(["status", "--region", "eu"]));
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("delivered"), "{status}");
    assert_eq!(super::terminate(child).await.code(), Some(0));

    // Without a direct URL there is no LISTEN: the runtime polls, and
    // still delivers.
    tasks.extend(schedule_file(&bouncer, 40..45));
    let child = remit_command!(bouncer)
        .env("REMIT_DATABASE__POOLER", "transaction")
        .args(["run", "--region", "eu"])
        .spawn()
        .unwrap();
    wait_delivered(&direct, &tasks, Duration::from_secs(30)).await;
    assert_eq!(super::terminate(child).await.code(), Some(0));

    let mut reminders: Vec<String> = receiver
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    reminders.sort();
    reminders.dedup();
    assert_eq!(reminders.len(), 45, "every task reached the receiver");
}

/// PgBouncer told to drop the startup parameters it does not support
/// (`ignore_startup_parameters = options`), and remit not told of the
/// pooler. `remit run` is refused at once, naming the remedy, instead of
/// running with named statements through a transaction pooler.
#[actix_rt::test]
async fn remit_run_is_refused_through_a_pooler_that_drops_options() {
    let Some(bouncer) = PgBouncer::start("ignore_startup_parameters = options").await else {
        return;
    };
    let migrated = behind(&bouncer).arg("migrate").output().unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    let started = Instant::now();
    let output = remit_command!(bouncer)
        .args(["run", "--region", "eu"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        took < remit_testkit::db::FAILS_FAST,
        "took {took:?}: {stderr}"
    );
    for named in [
        "ignore_startup_parameters",
        "database.pooler",
        "database.direct_url",
    ] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
}
