//! A 429 with Retry-After holds the task and its destination until the
//! receiver's deadline, and the retry carries the same keys.

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{AttemptOutcome, Region, TaskState};

use crate::support::{self, Receiver, Reply, RetryAfter, TestDb};

/// `skew`: how far the consumer's wall clock is off (negative: behind).
async fn honours(retry_after: RetryAfter, skew: chrono::Duration) {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script(
        "/hook",
        vec![Reply::status(429).retry_after(retry_after)],
        Reply::ok(),
    );
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let first = support::task(&db, "r0", &dest, Region::EU).await;
    let config = support::config(&db, Region::EU, "eu-1");
    let runtime = support::start_skewed(config, &db.store, skew).await;

    // The first request gets the 429; only then are the siblings scheduled,
    // so they meet the destination's pause.
    receiver
        .wait_until(Duration::from_secs(10), "the 429", |r| !r.is_empty())
        .await;
    let mut tasks = vec![first];
    for i in 1..4 {
        tasks.push(support::task(&db, &format!("r{i}"), &dest, Region::EU).await);
    }
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(15)).await;
    // What an operator sees of it on /metrics.
    let series = runtime.stats().metrics.encode();
    for expected in [
        r#"remit_rate_limited_total{region="eu",destination="crm"} 1"#,
        r#"remit_destination_pauses_total{region="eu",destination="crm"}"#,
        r#"remit_attempts_total{region="eu",destination="crm",outcome="retry_wait"} 1"#,
        r#"remit_attempts_total{region="eu",destination="crm",outcome="delivered"} 4"#,
        r#"remit_responses_total{region="eu",class="4xx"} 1"#,
        r#"remit_deadline_to_delivery_seconds_count{region="eu"} 4"#,
    ] {
        assert!(
            series.contains(expected),
            "{expected} missing from:\n{series}"
        );
    }
    runtime.shutdown().await;

    let requests = receiver.requests_to("/hook");
    let rejected = &requests[0];
    assert_eq!(rejected.status, 429);
    let raw = rejected.retry_after.clone().unwrap();
    let deadline = remit::policy::parse_retry_after(&raw, rejected.at, None).unwrap();
    for later in &requests[1..] {
        assert!(
            later.at >= deadline,
            "a request came at {} before the receiver's deadline {deadline} ({raw})",
            later.at
        );
    }
    // The retry is the same logical webhook: the same keys.
    let retried: Vec<_> = requests
        .iter()
        .filter(|r| r.header("idempotency-key") == rejected.header("idempotency-key"))
        .collect();
    assert_eq!(retried.len(), 2, "exactly one retry of the rejected task");
    assert_eq!(
        retried[1].header("webhook-id"),
        rejected.header("webhook-id")
    );
    assert_eq!(requests.len(), 5, "four tasks, one retry");

    let log = db.store.attempts(first).await.unwrap();
    assert_eq!(log[0].outcome, AttemptOutcome::RetryWait);
    assert_eq!(
        log[0].observed.retry_after_raw.as_deref(),
        Some(raw.as_str())
    );
    assert_eq!(log.last().unwrap().outcome, AttemptOutcome::Delivered);
}

#[actix_rt::test]
async fn delta_seconds_are_honoured() {
    honours(RetryAfter::Seconds(2), chrono::Duration::zero()).await;
}

#[actix_rt::test]
async fn an_http_date_is_honoured() {
    honours(
        RetryAfter::DateIn(Duration::from_secs(2)),
        chrono::Duration::zero(),
    )
    .await;
}

/// A clock that is behind would make an absolute retry time look past.
#[actix_rt::test]
async fn delta_seconds_hold_for_a_consumer_whose_clock_is_behind() {
    honours(RetryAfter::Seconds(2), chrono::Duration::seconds(-30)).await;
}

/// A clock that is ahead would make the receiver's date look past, unless
/// it is read against the receiver's own `Date`.
#[actix_rt::test]
async fn an_http_date_holds_for_a_consumer_whose_clock_is_ahead() {
    honours(
        RetryAfter::DateIn(Duration::from_secs(2)),
        chrono::Duration::seconds(30),
    )
    .await;
}
