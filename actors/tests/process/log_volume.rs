//! What `remit run` logs at `info`: no line per delivery or retry, one
//! `deliveries` line per destination with its counts (at the latest when
//! it stops), and a failure on a line of its own.

use std::process::Stdio;
use std::time::Duration;

use remit::domain::{Region, TaskState};
use serde_json::Value;

use crate::support::{self, Receiver, Reply, TestDb};
use crate::{kill, remit, run};

#[actix_rt::test]
async fn at_info_deliveries_are_summed_per_destination_and_failures_stand_alone() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    // The first answer is a 429, the rest 200s; `gone` answers 410.
    receiver.script("/hook", vec![Reply::status(429)], Reply::ok());
    receiver.script("/gone", vec![], Reply::status(410));
    run(remit(&db).arg("migrate"));
    let crm = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let gone = support::destination(&db, "gone", Region::EU, &receiver.url("/gone"), None).await;
    let mut delivered = Vec::new();
    for n in 0..20 {
        delivered.push(support::task(&db, &format!("r{n}"), &crm, Region::EU).await);
    }
    let failed = support::task(&db, "lost", &gone, Region::EU).await;

    let child = remit(&db)
        .args(["run", "--region", "eu"])
        .env("REMIT_LOG__FORMAT", "json")
        .env("REMIT_LOG__LEVEL", "info")
        .env("REMIT_RETRY__BACKOFF_BASE_MS", "10")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    support::wait_for_state(
        &db,
        &delivered,
        TaskState::Delivered,
        Duration::from_secs(30),
    )
    .await;
    support::wait_for_state(&db, &[failed], TaskState::Failed, Duration::from_secs(30)).await;
    kill(&child, "TERM");
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<Value> = stderr
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line} in {stderr}"))
        })
        .collect();
    let said = |msg: &str| -> Vec<&Value> { lines.iter().filter(|l| l["msg"] == msg).collect() };

    assert!(said("delivered").is_empty(), "{lines:#?}");
    assert!(said("will retry").is_empty(), "{lines:#?}");
    let failures = said("failed");
    assert_eq!(failures.len(), 1, "{lines:#?}");
    assert_eq!(failures[0]["task"], failed.to_string());

    let summed = |destination: &str, key: &str| -> u64 {
        said("deliveries")
            .iter()
            .filter(|l| l["destination"] == destination)
            .map(|l| l[key].as_u64().unwrap())
            .sum()
    };
    assert_eq!(summed("crm", "delivered"), 20, "{lines:#?}");
    assert_eq!(summed("crm", "retried"), 1);
    assert_eq!(summed("crm", "rate_limited"), 1);
    assert_eq!(summed("crm", "failed"), 0);
    assert_eq!(summed("gone", "failed"), 1);
    assert_eq!(summed("gone", "delivered"), 0);
    // Twenty-one tasks came to a handful of lines.
    assert!(lines.len() < 20, "{lines:#?}");
}
