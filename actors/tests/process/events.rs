//! The events receiver is down when a destination disables itself, and
//! the process is killed: after a restart the `destination.disabled`
//! event still arrives, and `remit destination enable` brings both the
//! destination and a `destination.enabled` event. Two processes of a
//! region check for failures, one is killed: each failure is announced
//! once.

use std::time::Duration;

use serde_json::Value;

use super::{kill, remit, run};
use crate::support::{Receiver, Reply, TestDb};

/// A child that is killed if the test ends early, so it never outlives it.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn typed(r: &crate::support::receiver::Received, kind: &str) -> bool {
    serde_json::from_slice::<Value>(&r.body).is_ok_and(|b| b["type"] == kind)
}

#[actix_rt::test]
async fn a_disable_event_survives_a_down_receiver_and_a_killed_process() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![], Reply::status(500));
    let events = Receiver::start();
    events.script("/events", vec![], Reply::status(503));
    let secret = remit_actors::signature::generate_secret();

    run(remit(&db).arg("migrate"));
    run(remit(&db).args([
        "destination",
        "add",
        "--id",
        "crm",
        "--region",
        "eu",
        "--url",
        &receiver.url("/hook"),
        "--disable-after-seconds",
        "0",
        "--disable-after-failures",
        "2",
    ]));
    run(remit(&db).args([
        "schedule",
        "--tenant",
        "clinic-1",
        "--reminder",
        "r1",
        "--destination",
        "crm",
        "--region",
        "eu",
        "--not-before",
        &chrono::Utc::now().to_rfc3339(),
        "--payload",
        r#"{"renewal":"2026-09-01"}"#,
    ]));
    let start = || {
        remit(&db)
            .args(["run", "--region", "eu"])
            .env("REMIT_RETRY__BACKOFF_BASE_MS", "10")
            .env("REMIT_RETRY__BACKOFF_CAP_SECONDS", "1")
            .env("REMIT_EVENTS__URL", events.url("/events"))
            .env("REMIT_EVENTS__SECRET", &secret)
            .env("REMIT_EVENTS__POLL_MS", "50")
            // A short lease: the killed process's lease on the event's
            // task runs out quickly.
            .env("REMIT_LEASE__SECONDS", "2")
            .env("REMIT_SEND__TIMEOUT_MS", "1000")
            .spawn()
            .map(Running)
            .unwrap()
    };

    let mut child = start();
    // The event is tried, and refused: the events receiver is down.
    events
        .wait_until(Duration::from_secs(20), "a refused event", |r| {
            r.iter().any(|r| typed(r, "destination.disabled"))
        })
        .await;
    kill(&child.0, "KILL");
    child.0.wait().unwrap();
    assert!(events.requests().iter().all(|r| r.status == 503));

    // What an operator sees meanwhile.
    let out = run(remit(&db).args(["status", "--format", "json"]));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let disabled = &status["disabled"][0];
    assert_eq!(disabled["destination"], "crm", "{status}");
    let reason = disabled["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("auto: 2 failures in a row over ")
            && (reason.ends_with(" seconds") || reason.ends_with(" second")),
        "{status}"
    );
    assert_eq!(disabled["last_error"], "status 500", "{status}");
    let out = run(remit(&db).arg("status"));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Disabled destinations"), "{text}");

    // The events receiver recovers; a new process delivers the event.
    events.script("/events", vec![], Reply::ok());
    let mut child = start();
    events
        .wait_until(Duration::from_secs(20), "the delivered event", |r| {
            r.iter()
                .any(|r| r.status == 200 && typed(r, "destination.disabled"))
        })
        .await;

    // Enabled by the CLI while the process runs: the enabled event follows.
    receiver.script("/hook", vec![], Reply::ok());
    let out = run(remit(&db).args(["destination", "enable", "crm"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("enabled"));
    events
        .wait_until(Duration::from_secs(20), "the enabled event", |r| {
            r.iter()
                .any(|r| r.status == 200 && typed(r, "destination.enabled"))
        })
        .await;
    kill(&child.0, "INT");
    assert_eq!(child.0.wait().unwrap().code(), Some(0));
    let delivered = events
        .requests()
        .iter()
        .filter(|r| r.status == 200 && typed(r, "destination.disabled"))
        .count();
    assert_eq!(delivered, 1, "the event once, under one key");
}

/// The sum of the counts of the `task.failed` events answered 2xx, each
/// event once however often it arrived (a receiver deduplicates on
/// `webhook-id`: a process killed after its request and before its commit
/// leaves the event to be sent again, under the same id).
fn failures_counted(log: &[crate::support::receiver::Received]) -> u64 {
    let mut seen = std::collections::HashMap::new();
    for r in log.iter().filter(|r| r.status == 200) {
        let Ok(body) = serde_json::from_slice::<Value>(&r.body) else {
            continue;
        };
        if body["type"] != "task.failed" {
            continue;
        }
        let id = r.header("webhook-id").unwrap_or_default().to_owned();
        let count = body["data"]["count"].as_u64().unwrap_or(0);
        let before = seen.insert(id, (count, r.body.clone()));
        assert!(
            before.is_none_or(|(_, b)| b == r.body),
            "one webhook-id, one event"
        );
    }
    seen.values().map(|(count, _)| count).sum()
}

#[actix_rt::test]
async fn two_processes_one_killed_announce_each_failure_once() {
    const TASKS: u64 = 40;
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script(
        "/gone",
        vec![],
        Reply::status(410).delayed(Duration::from_millis(20)),
    );
    let events = Receiver::start();
    events.script("/events", vec![], Reply::ok());
    let secret = remit_actors::signature::generate_secret();
    run(remit(&db).arg("migrate"));
    run(remit(&db).args([
        "destination",
        "add",
        "--id",
        "gone",
        "--region",
        "eu",
        "--url",
        &receiver.url("/gone"),
    ]));
    let start = |owner: &str| {
        remit(&db)
            .args(["run", "--region", "eu"])
            .env("REMIT_LEASE_OWNER", owner)
            .env("REMIT_EVENTS__URL", events.url("/events"))
            .env("REMIT_EVENTS__SECRET", &secret)
            .env("REMIT_EVENTS__POLL_MS", "50")
            .env("REMIT_EVENTS__CHECK_INTERVAL_MS", "20")
            .env("REMIT_EVENTS__WINDOW_SECONDS", "1")
            .env("REMIT_LEASE__SECONDS", "2")
            .env("REMIT_SEND__TIMEOUT_MS", "1000")
            .spawn()
            .map(Running)
            .unwrap()
    };
    let first = start("eu-1");
    let second = start("eu-2");
    let gone = remit::domain::DestinationId::new("gone").unwrap();
    for i in 0..TASKS {
        let new = remit::domain::NewTask {
            traceparent: None,
            tenant_id: remit::domain::TenantId::new("clinic-1").unwrap(),
            reminder_id: remit::domain::ReminderId::new(&format!("r{i}")).unwrap(),
            destination_id: gone.clone(),
            region: remit::domain::Region::EU,
            not_before: chrono::Utc::now(),
            retry_horizon: chrono::Duration::hours(1),
            payload: remit::domain::Payload::json(r#"{"renewal":"2026-09-01"}"#.to_owned()),
            ordering_key: None,
        };
        remit::store::Schedule::schedule(&db.store, new)
            .await
            .unwrap();
    }
    // One process is killed once the first failures are announced,
    // whatever it was doing; the other carries on.
    events
        .wait_until(Duration::from_secs(30), "a task.failed event", |log| {
            failures_counted(log) > 0
        })
        .await;
    kill(&first.0, "KILL");
    events
        .wait_until(Duration::from_secs(60), "every failure announced", |log| {
            failures_counted(log) >= TASKS
        })
        .await;
    kill(&second.0, "INT");
    let log = events.requests_to("/events");
    assert_eq!(failures_counted(&log), TASKS, "each failure once");
}
