//! The `remit` binary as operators run it: child processes, real signals.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use remit_testkit::runtime as support;

mod audit;
mod bulk_cancel;
mod cancel;
mod console;
mod database;
mod demo;
mod destination;
mod events;
mod export_file;
mod import;
mod log_volume;
mod payload_key;
mod pgbouncer;
mod prometheus;
mod prune;
mod quota;
mod reconcile;
mod rekey;
mod replay;
mod replica;
mod rotate_secret;
mod schedule;
mod startup;
mod status;
mod task_changes;
mod token;
mod unit;

use std::process::{Child, Command, Output};
use std::time::Duration;

use remit::domain::TaskState;
use support::{Receiver, Reply, TestDb};

/// `remit` pointed at the test's schema.
fn remit(db: &TestDb) -> Command {
    remit_testkit::remit_command!(db)
}

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs `command` with `input` on its standard input and waits for it.
fn run_with_stdin(command: &mut Command, input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `text` is an instant as the command line writes every one: RFC 3339,
/// UTC, to the second, with `Z`.
fn assert_cli_instant(text: &str) {
    let at = chrono::DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text:?} is not RFC 3339: {e}"));
    assert_eq!(
        at.with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        text,
        "not the one form: UTC, seconds, Z"
    );
}

fn kill(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// `remit schedule` of one reminder of tenant `clinic-1` to the
/// destination `crm` in `region`, due in 2030; the payload flags are the
/// caller's.
fn schedule_in_2030(db: &TestDb, region: &str, reminder: &str) -> Command {
    let mut command = remit(db);
    command.args([
        "schedule",
        "--tenant",
        "clinic-1",
        "--reminder",
        reminder,
        "--destination",
        "crm",
        "--region",
        region,
        "--not-before",
        "2030-01-01T09:00:00Z",
    ]);
    command
}

/// Sends SIGTERM, as an operator or systemd stops remit, and waits for
/// the process to exit without blocking the test's runtime.
async fn terminate(mut child: Child) -> std::process::ExitStatus {
    kill(&child, "TERM");
    tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap()
}

#[actix_rt::test]
async fn the_readme_flow_and_a_graceful_sigterm_under_load() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    // Slow answers, so SIGTERM lands while sends are in flight.
    receiver.script(
        "/hook",
        vec![],
        Reply::ok().delayed(Duration::from_millis(150)),
    );

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
    ]));
    let mut tasks = Vec::new();
    for i in 0..40 {
        let out = run(remit(&db).args([
            "schedule",
            "--tenant",
            "clinic-1",
            "--reminder",
            &format!("r{i}"),
            "--destination",
            "crm",
            "--region",
            "eu",
            "--not-before",
            &chrono::Utc::now().to_rfc3339(),
            "--payload",
            r#"{"renewal":"2026-09-01"}"#,
        ]));
        let line = String::from_utf8(out.stdout).unwrap();
        let id = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(line.contains("idempotency_key msg_"), "{line}");
        tasks.push(remit::domain::TaskId(id));
    }

    let child = remit(&db)
        .args(["run", "--region", "eu"])
        .env("REMIT_CONSUMER_ID", "eu-child")
        .env("REMIT_THROTTLE__DEFAULT__RATE_PER_SECOND", "20")
        .env("REMIT_THROTTLE__DEFAULT__MAX_IN_FLIGHT", "4")
        .spawn()
        .unwrap();
    receiver
        .wait_until(Duration::from_secs(15), "deliveries under way", |r| {
            r.len() >= 5
        })
        .await;
    let status = terminate(child).await;
    assert_eq!(status.code(), Some(0), "a graceful stop exits 0");

    let still_leased = db
        .count(
            "SELECT count(*) AS n FROM tasks WHERE state = 'leased' AND lease_owner = 'eu-child'",
        )
        .await;
    assert_eq!(still_leased, 0, "every lease was finished or handed back");
    let delivered = db
        .count("SELECT count(*) AS n FROM tasks WHERE state = 'delivered'")
        .await;
    assert!(
        delivered < 40,
        "the stop came mid-run ({delivered} delivered)"
    );
    assert_eq!(
        delivered as usize,
        receiver.requests().len(),
        "every request that reached the receiver was recorded as delivered"
    );

    // A second process finishes the rest.
    let mut child = remit(&db).args(["run", "--region", "eu"]).spawn().unwrap();
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(20)).await;
    kill(&child, "INT");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[actix_rt::test]
async fn configuration_mistakes_exit_2_and_name_the_key() {
    let db = TestDb::with_database_clock().await;
    let cases: [(&[(&str, &str)], &str); 5] = [
        (&[("REMIT_LEASE__SECONDS", "soon")], "lease.seconds"),
        (
            &[(
                "REMIT_SEND__ALLOW_HOSTS",
                r#"["127.0.0.0/8","10.0.0.0/40"]"#,
            )],
            "send.allow_hosts",
        ),
        (&[("REMIT_SEND__TIMEOUT_MS", "60000")], "send.timeout_ms"),
        (&[("REMIT_REGION", "Ap")], "region"),
        (&[("REMIT_PAYLOAD_KEY", "")], "REMIT_PAYLOAD_KEY"),
    ];
    for (env, named) in cases {
        let mut command = remit(&db);
        command.arg("run");
        for (k, v) in env {
            command.env(k, v);
        }
        if env[0].1.is_empty() {
            command.env_remove("REMIT_PAYLOAD_KEY");
        }
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{env:?}: {stderr}");
        assert!(
            stderr.to_lowercase().contains(&named.to_lowercase()),
            "{env:?} should name {named}: {stderr}"
        );
    }
    let missing = remit(&db)
        .args(["run", "--config", "/nonexistent/remit.toml"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

/// `remit destination add` refuses what the send policy refuses, exits 2
/// and says which URL and why; nothing is stored.
#[actix_rt::test]
async fn destination_add_refuses_blocked_addresses_and_plain_http() {
    let db = TestDb::with_database_clock().await;
    run(remit(&db).arg("migrate"));
    let cases = [
        ("https://127.0.0.1:5432/", "[]", "loopback"),
        ("https://169.254.169.254/latest/", "[]", "cloud metadata"),
        ("https://localhost:8443/hook", "[]", "resolves only to"),
        ("http://hooks.example.com/in", "[]", "plain http"),
        // The CIDR opens the address, not plain http to a name.
        (
            "http://localhost:8080/hook",
            r#"["127.0.0.0/8"]"#,
            "plain http",
        ),
    ];
    for (i, (url, allow, why)) in cases.into_iter().enumerate() {
        let id = format!("d{i}");
        let output = remit(&db)
            .env("REMIT_SEND__ALLOW_HOSTS", allow)
            .args([
                "destination",
                "add",
                "--id",
                &id,
                "--region",
                "us",
                "--url",
                url,
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{url}: {stderr}");
        assert!(
            stderr.contains("url") && stderr.contains(url) && stderr.contains(why),
            "{url}: {stderr}"
        );
    }
    // Allowlisted, and with the flag, the same URLs are accepted.
    run(remit(&db).args([
        "destination",
        "add",
        "--id",
        "local",
        "--region",
        "us",
        "--url",
        "http://localhost:8080/hook",
    ]));
    run(remit(&db)
        .env("REMIT_SEND__ALLOW_PLAIN_HTTP", "true")
        .args([
            "destination",
            "add",
            "--id",
            "plain",
            "--region",
            "us",
            "--url",
            "http://hooks.example.com/in",
        ]));
}

#[test]
fn keygen_prints_a_usable_key() {
    let output = Command::new(env!("CARGO_BIN_EXE_remit"))
        .arg("keygen")
        .output()
        .unwrap();
    assert!(output.status.success());
    let key = String::from_utf8(output.stdout).unwrap();
    assert!(remit::payload_crypto::PayloadKey::from_base64(key.trim()).is_ok());
}
