//! What Prometheus's own tools say of remit: the exposition a live `remit
//! run` serves passes `promtool check metrics` (on `api.bind` and on
//! `metrics.bind`), and `deploy/remit-alerts.yml` passes `promtool check
//! rules` and its unit tests (`deploy/remit-alerts.test.yml`).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};

use crate::support::{self, Receiver, Reply, TestDb};
use crate::{remit, run, terminate};

/// Debian's `promtool` (package `prometheus`), which `make test` installs
/// where it is missing (`tests/promtool.sh`); `PROMTOOL` names another.
fn promtool() -> Command {
    let path = std::env::var_os("PROMTOOL").unwrap_or_else(|| "promtool".into());
    let found = Command::new(&path)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        found,
        "promtool is missing: `make test` installs it as root (apt-get install prometheus), \
         or set PROMTOOL to one"
    );
    Command::new(path)
}

fn free_addr() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .to_string()
}

/// GET http://`addr``path` once `remit run` answers it, with no `Accept`
/// header, as `curl` or promtool's users fetch it.
async fn scrape(addr: &str) -> String {
    let client = awc::Client::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(mut response) = client.get(format!("http://{addr}/metrics")).send().await {
            if response.status().is_success() {
                let kind = response
                    .headers()
                    .get("content-type")
                    .unwrap()
                    .to_str()
                    .unwrap();
                assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
                let body = response.body().limit(1 << 22).await.unwrap();
                return String::from_utf8(body.to_vec()).unwrap();
            }
        }
        assert!(Instant::now() < deadline, "no /metrics on {addr}");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

fn check_metrics(text: &str) {
    use std::io::Write;
    let mut child = promtool()
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[actix_rt::test]
async fn promtool_accepts_what_a_running_remit_exposes() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![Reply::status(429)], Reply::ok());
    run(remit(&db).arg("migrate"));
    let crm = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let task = support::task(&db, "r1", &crm, Region::EU).await;

    // On the API's listener, with a delivery's series (a 429, then a
    // success, so every kind of family has samples).
    let api = free_addr();
    let child = remit(&db)
        .args(["run", "--region", "eu"])
        .env("REMIT_API__BIND", &api)
        .env("REMIT_RETRY__BACKOFF_BASE_MS", "10")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    support::wait_for_state(&db, &[task], TaskState::Delivered, Duration::from_secs(30)).await;
    let text = scrape(&api).await;
    assert!(
        text.contains(
            "remit_attempts_total{region=\"eu\",destination=\"crm\",outcome=\"delivered\"} 1"
        ),
        "{text}"
    );
    check_metrics(&text);
    assert!(terminate(child).await.success());

    // On a listener of its own.
    let metrics = free_addr();
    let child = remit(&db)
        .args(["run", "--region", "eu"])
        .env("REMIT_API__BIND", free_addr())
        .env("REMIT_METRICS__BIND", &metrics)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    check_metrics(&scrape(&metrics).await);
    assert!(terminate(child).await.success());
}

#[test]
fn the_alert_rules_pass_promtool_and_their_unit_tests() {
    let deploy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    for args in [
        ["check", "rules", "remit-alerts.yml"],
        ["test", "rules", "remit-alerts.test.yml"],
    ] {
        let output = promtool().args(args).current_dir(&deploy).output().unwrap();
        assert!(
            output.status.success(),
            "promtool {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
