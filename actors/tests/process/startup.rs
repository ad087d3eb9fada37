//! How `remit run` starts: a port in use is one line and exit 2; without
//! a bootstrap API token it warns that /v1 takes made tokens only.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{kill, remit};
use crate::support::TestDb;

#[actix_rt::test]
async fn an_api_port_in_use_is_one_line_and_exit_2() {
    let db = TestDb::with_database_clock().await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    // The API's listener, then the metrics listener on the taken address.
    for (variable, setting) in [
        ("REMIT_API__BIND", "api.bind"),
        ("REMIT_METRICS__BIND", "metrics.bind"),
    ] {
        let output = remit(&db)
            .args(["run", "--region", "eu"])
            .env(variable, &addr)
            .env("REMIT_API_TOKEN", "t0k")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&addr) && stderr.contains("in use") && stderr.contains(setting),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    drop(taken);
}

#[actix_rt::test]
async fn without_a_bootstrap_token_it_warns_that_v1_takes_made_tokens_only() {
    let db = TestDb::with_database_clock().await;
    let mut child = remit(&db)
        .args(["run", "--region", "eu"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The warning comes once the listeners are open; then stop it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    let mut chunk = [0u8; 4096];
    while !seen.contains("no bootstrap API token") && Instant::now() < deadline {
        match stderr.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&chunk[..n])),
        }
    }
    kill(&child, "TERM");
    child.wait().unwrap();
    assert!(
        seen.contains("no bootstrap API token") && seen.contains("remit token create"),
        "{seen}"
    );
}
