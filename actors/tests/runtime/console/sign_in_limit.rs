//! The limit on failed sign-ins over real HTTP: an address that fails too
//! often is refused (429, Retry-After, a message) even with a good token,
//! another address is not, successes do not count, the window and the
//! lockout end (on a clock the test moves, not by waiting), and `remit
//! run` counts each refusal on /metrics.

use std::net::IpAddr;
use std::time::Duration;

use remit::domain::Region;

use super::browser::{Answer, Browser};
use super::{console_with_clock, SignInClock};
use crate::support::{self, Backend, TestDb, API_TOKEN};

fn from(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// Refused, to be tried again in whole seconds a little under `at_most`
/// (the lockout runs while the test does).
fn assert_refused(answer: &Answer, at_most: u64) {
    assert_eq!(answer.status, 429, "{}", answer.body);
    let retry_after: u64 = answer.header("retry-after").parse().unwrap();
    assert!(
        (at_most.saturating_sub(5)..=at_most).contains(&retry_after),
        "Retry-After {retry_after}, expected up to {at_most}"
    );
    assert!(
        answer.body.contains(r#"id="sign-in-error""#)
            && answer
                .body
                .contains("Too many failed sign-ins from your address"),
        "{}",
        answer.body
    );
    assert!(answer.headers.get("set-cookie").is_none());
}

#[actix_rt::test]
async fn failed_sign_ins_lock_their_address_out_and_no_other() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let clock = SignInClock::default();
    let console = console_with_clock(
        &db,
        Region::EU,
        |config| {
            config.console.sign_in_failures = 3;
            config.console.sign_in_window_seconds = 60;
            config.console.sign_in_lockout_seconds = 120;
        },
        clock.clone(),
    )
    .await;
    let addr = console.addr();

    let mut guesser = Browser::from_address(addr, from("127.0.0.1"));
    for guess in ["wrong", "remit_notatoken", ""] {
        assert_eq!(guesser.sign_in(guess).await.status, 401, "{guess:?}");
    }
    // The good token too: the address is refused before any token is read.
    assert_refused(&guesser.sign_in(API_TOKEN).await, 120);
    assert_refused(&guesser.sign_in("wrong").await, 120);
    assert!(guesser.cookie.is_none());

    // Another address is not affected, neither for a good token nor for
    // a bad one.
    let mut colleague = Browser::from_address(addr, from("127.0.0.2"));
    assert_eq!(colleague.sign_in("wrong").await.status, 401);
    assert_eq!(colleague.sign_in(API_TOKEN).await.status, 303);
    assert_eq!(colleague.get("/console/overview").await.status, 200);

    // Successes do not count: two failures among them still let it in.
    let mut regular = Browser::from_address(addr, from("127.0.0.3"));
    for _ in 0..5 {
        assert_eq!(regular.sign_in(API_TOKEN).await.status, 303);
    }
    assert_eq!(regular.sign_in("wrong").await.status, 401);
    assert_eq!(regular.sign_in("wrong").await.status, 401);
    assert_eq!(regular.sign_in(API_TOKEN).await.status, 303);

    // Failures spread over more than the window never add up to a lockout.
    let mut slow = Browser::from_address(addr, from("127.0.0.4"));
    assert_eq!(slow.sign_in("wrong").await.status, 401);
    assert_eq!(slow.sign_in("wrong").await.status, 401);
    clock.advance(Duration::from_secs(61));
    assert_eq!(slow.sign_in("wrong").await.status, 401);
    assert_eq!(slow.sign_in("wrong").await.status, 401);
    assert_eq!(slow.sign_in(API_TOKEN).await.status, 303);

    // The lockout counts down, then ends.
    assert_refused(&guesser.sign_in(API_TOKEN).await, 59);
    clock.advance(Duration::from_secs(59));
    assert_eq!(guesser.sign_in(API_TOKEN).await.status, 303);
    assert_eq!(guesser.get("/console/overview").await.status, 200);
    console.stop().await;
}

#[actix_rt::test]
async fn remit_run_counts_refused_sign_ins_on_metrics() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.console.sign_in_failures = 1;
    let runtime = support::start(config, &db.store).await;
    let series = "remit_console_sign_ins_refused_total{region=\"eu\"}";
    let metrics = || async {
        let mut response = awc::Client::default()
            .get(format!("http://{}/metrics", runtime.api_addr()))
            .send()
            .await
            .unwrap();
        String::from_utf8(response.body().await.unwrap().to_vec()).unwrap()
    };
    let before = metrics().await;
    assert!(before.contains(&format!("{series} 0")), "{before}");

    let mut browser = Browser::new(runtime.api_addr());
    assert_eq!(browser.sign_in("wrong").await.status, 401);
    for _ in 0..2 {
        let refused = browser.sign_in(API_TOKEN).await;
        assert_refused(&refused, 300);
    }
    let after = metrics().await;
    assert!(after.contains(&format!("{series} 2")), "{after}");
    runtime.shutdown().await;
}
