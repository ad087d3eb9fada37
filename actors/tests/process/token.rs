//! `remit token`: a token made by one process works on a `remit run` in
//! another, and is refused there on the very next request once a third
//! process has revoked it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::TestDb;
use crate::{remit, run, terminate};

/// GET `path` on `addr` with `token`: the status.
async fn status(addr: &str, path: &str, token: &str) -> u16 {
    awc::Client::default()
        .get(format!("http://{addr}{path}"))
        .insert_header(("authorization", format!("Bearer {token}")))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn ready(addr: &str) {
    let client = awc::Client::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(response) = client.get(format!("http://{addr}/readyz")).send().await {
            if response.status().is_success() {
                return;
            }
        }
        assert!(Instant::now() < deadline, "remit run never became ready");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_rt::test]
async fn a_token_revoked_by_one_process_is_refused_by_another_at_once() {
    let db = TestDb::with_database_clock().await;
    let made = run(remit(&db).args(["token", "create", "--scope", "read", "--name", "dash"]));
    let token = String::from_utf8(made.stdout).unwrap().trim().to_owned();
    assert!(token.starts_with("remit_"), "{token}");
    let told = String::from_utf8(made.stderr).unwrap();
    let id = told
        .split_whitespace()
        .find(|word| word.starts_with("tok_"))
        .unwrap_or_else(|| panic!("no id in {told}"))
        .to_owned();
    assert!(told.contains("scope read, every tenant"), "{told}");

    // No bootstrap token: made tokens work on their own.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .to_string();
    let child = remit(&db)
        .args(["run", "--region", "eu"])
        .env("REMIT_API__BIND", &addr)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ready(&addr).await;
    assert_eq!(status(&addr, "/v1/destinations/none", &token).await, 404);
    assert_eq!(status(&addr, "/v1/tokens", &token).await, 403, "read only");

    let listed = run(remit(&db).args(["token", "list"]));
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.contains(&id) && listed.contains("scope read"),
        "{listed}"
    );
    assert!(listed.contains("revoked -"), "{listed}");
    assert!(!listed.contains(&token), "never the secret: {listed}");
    let made_at = listed
        .split("  made ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{listed}"));
    crate::assert_cli_instant(made_at);

    let revoked = run(remit(&db).args(["token", "revoke", &id]));
    let revoked = String::from_utf8(revoked.stdout).unwrap();
    let at = revoked
        .strip_prefix(&format!("revoked {id} at "))
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("{revoked:?}"));
    crate::assert_cli_instant(at);
    let listed = run(remit(&db).args(["token", "list"]));
    let listed = String::from_utf8(listed.stdout).unwrap();
    let revoked_at = listed
        .trim_end()
        .rsplit_once("  revoked ")
        .map(|(_, at)| at)
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(revoked_at, at, "{listed}");
    // The very next request, in the other process: no cache outlives it.
    assert_eq!(status(&addr, "/v1/destinations/none", &token).await, 401);
    let listed = run(remit(&db).args(["token", "list", "--format", "json"]));
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert!(listed[0]["revoked_at"].is_string(), "{listed}");

    assert_eq!(terminate(child).await.code(), Some(0));
}

#[actix_rt::test]
async fn bad_token_commands_exit_2_and_name_the_flag() {
    let db = TestDb::with_database_clock().await;
    let cases: [(&[&str], &str); 5] = [
        (&["create", "--scope", "root"], "--scope"),
        (&["create", "--scope", "admin", "--tenant", "a"], "--tenant"),
        (
            &[
                "create",
                "--scope",
                "read",
                "--expires",
                "2001-01-01T00:00:00Z",
            ],
            "--expires",
        ),
        (
            &["create", "--scope", "read", "--expires", "whenever"],
            "--expires",
        ),
        (
            &["revoke", "tok_0000000000000000"],
            "no token with id tok_0000000000000000",
        ),
    ];
    for (args, named) in cases {
        let output = remit(&db).arg("token").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
    let listed = run(remit(&db).args(["token", "list"]));
    assert_eq!(
        String::from_utf8(listed.stdout).unwrap().trim(),
        "no API tokens"
    );
}
