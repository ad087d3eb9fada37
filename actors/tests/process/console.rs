//! `remit console`: the console and /healthz against the database, with
//! no runtime (the API is not served), and a session that every process
//! with the same payload key accepts.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::TestDb;
use crate::{remit, terminate};

const TOKEN: &str = "console-test-token";

fn free_addr() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .to_string()
}

fn console(db: &TestDb, addr: &str) -> Child {
    console_with_env(db, addr, &[])
}

fn console_with_env(db: &TestDb, addr: &str, env: &[(&str, &str)]) -> Child {
    remit(db)
        .args(["console", "--bind", addr, "--region", "eu"])
        .env("REMIT_API_TOKEN", TOKEN)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn healthy(addr: &str) {
    let client = awc::Client::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(response) = client.get(format!("http://{addr}/healthz")).send().await {
            if response.status().is_success() {
                return;
            }
        }
        assert!(Instant::now() < deadline, "remit console never answered");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Signs in with the test's token: the whole Set-Cookie header.
async fn sign_in(addr: &str) -> String {
    let signed_in = awc::Client::builder()
        .disable_redirects()
        .finish()
        .post(format!("http://{addr}/console/sign-in"))
        .send_form(&[("token", TOKEN)])
        .await
        .unwrap();
    assert_eq!(signed_in.status().as_u16(), 303);
    signed_in
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// GET `path` with `cookie`: the status.
async fn get(addr: &str, path: &str, cookie: &str) -> u16 {
    awc::Client::builder()
        .disable_redirects()
        .finish()
        .get(format!("http://{addr}{path}"))
        .insert_header(("cookie", cookie))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[actix_rt::test]
async fn remit_console_serves_the_console_alone_and_shares_sessions_by_key() {
    let db = TestDb::with_database_clock().await;
    let (one, two) = (free_addr(), free_addr());
    let (first, second) = (console(&db, &one), console(&db, &two));
    healthy(&one).await;
    healthy(&two).await;

    let cookie = sign_in(&one).await;
    // Plain http, and nothing says a proxy ends TLS in front.
    assert!(!cookie.contains("Secure"), "{cookie}");
    let cookie = cookie.split(';').next().unwrap().to_owned();
    assert_eq!(get(&one, "/console/overview", &cookie).await, 200);
    // The other process derives the same session key from the payload key.
    assert_eq!(get(&two, "/console/overview", &cookie).await, 200);
    assert_eq!(
        get(&two, "/console/overview", "remit_console=forged").await,
        303
    );
    // No API and no runtime here.
    assert_eq!(get(&one, "/v1/destinations/crm", "").await, 404);
    assert_eq!(get(&one, "/readyz", "").await, 404);

    assert_eq!(terminate(first).await.code(), Some(0));
    assert_eq!(terminate(second).await.code(), Some(0));
}

#[actix_rt::test]
async fn the_environment_marks_the_session_cookie_secure_behind_a_tls_proxy() {
    let db = TestDb::with_database_clock().await;
    let addr = free_addr();
    let console = console_with_env(&db, &addr, &[("REMIT_CONSOLE__SECURE_COOKIE", "true")]);
    healthy(&addr).await;
    let cookie = sign_in(&addr).await;
    assert!(cookie.starts_with("remit_console="), "{cookie}");
    assert!(cookie.contains("; Secure"), "{cookie}");
    assert_eq!(terminate(console).await.code(), Some(0));
}
