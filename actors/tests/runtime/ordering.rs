//! Ordering keys end to end: a 429 with Retry-After on the head of a line
//! holds the next task of the same key until the head is delivered, while
//! a task of another key on the same destination goes on.

use remit::store::Schedule;
use std::time::Duration;

use remit::domain::{Region, TaskId, TaskState};

use crate::support::{self, Received, Receiver, Reply, RetryAfter, TestDb};

/// How long the receiver takes over every answer after the 429: the task
/// behind the head can only be sent once the head's retry is answered.
fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

const ANSWER_TAKES: Duration = Duration::from_millis(800);

async fn requests_of<'a>(db: &TestDb, requests: &'a [Received], id: TaskId) -> Vec<&'a Received> {
    let key = db.store.task(id).await.unwrap().unwrap().idempotency_key;
    requests
        .iter()
        .filter(|r| r.header("idempotency-key") == Some(key.as_str()))
        .collect()
}

#[actix_rt::test]
async fn a_retry_after_on_the_head_holds_its_line_and_not_another() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script(
        "/hook",
        vec![Reply::status(429).retry_after(RetryAfter::Seconds(2))],
        Reply::ok().delayed(ANSWER_TAKES),
    );
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let head = support::task_in_line(&db, "head", &dest, Region::EU, now(), "patient-1").await;
    let config = support::config(&db, Region::EU, "eu-1");
    let runtime = support::start(config, &db.store).await;

    // The head gets the 429; only then are the others scheduled, so the
    // head is in retry_wait when they become due.
    receiver
        .wait_until(Duration::from_secs(10), "the 429", |r| !r.is_empty())
        .await;
    let behind = support::task_in_line(&db, "behind", &dest, Region::EU, now(), "patient-1").await;
    let other = support::task_in_line(&db, "other", &dest, Region::EU, now(), "patient-2").await;
    support::wait_for_state(
        &db,
        &[head, behind, other],
        TaskState::Delivered,
        Duration::from_secs(20),
    )
    .await;
    runtime.shutdown().await;

    let requests = receiver.requests_to("/hook");
    let head_sent = requests_of(&db, &requests, head).await;
    let behind_sent = requests_of(&db, &requests, behind).await;
    let other_sent = requests_of(&db, &requests, other).await;
    assert_eq!(
        (head_sent.len(), behind_sent.len(), other_sent.len()),
        (2, 1, 1),
        "the head once rejected and once retried, the others once each"
    );
    let (rejected, retried) = (head_sent[0], head_sent[1]);
    assert_eq!(rejected.status, 429);
    let raw = rejected.retry_after.clone().unwrap();
    let deadline = remit::policy::parse_retry_after(&raw, rejected.at, None).unwrap();
    assert!(retried.at >= deadline, "the head's retry came early");
    let answered = retried.at + chrono::Duration::from_std(ANSWER_TAKES).unwrap();
    assert!(
        behind_sent[0].at >= answered,
        "the task behind the head was sent at {} before the head's retry was answered at {answered}",
        behind_sent[0].at
    );
    assert!(
        other_sent[0].at < behind_sent[0].at,
        "the other line waited for the held one: sent at {}, the held task at {}",
        other_sent[0].at,
        behind_sent[0].at
    );
}
