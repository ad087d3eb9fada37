//! One crash at each durable boundary of a delivery, on each store.

use remit::store::{Schedule, CRASH_EXIT_CODE};
use std::time::Duration;

use chrono::Utc;
use remit::domain::{AttemptOutcome, Region, TaskId, TaskState};
use remit_actors::runtime::failpoint;

use crate::consumer::Consumer;
use crate::support::{self, Backend, Receiver, Reply, RetryAfter, TestDb};

struct Crashed {
    db: TestDb,
    receiver: Receiver,
    task: TaskId,
    not_before: chrono::DateTime<Utc>,
}

/// Schedules one task, runs a consumer armed to exit at `point`, waits for
/// the crash, then lets a healthy consumer of the region finish the task.
async fn crash_at(backend: Backend, point: &str, first_reply: Reply) -> Crashed {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![first_reply], Reply::ok());
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let not_before = Utc::now() + chrono::Duration::milliseconds(300);
    let task = support::task_at(&db, "r1", &dest, Region::EU, not_before).await;

    let mut doomed = Consumer::start(
        &db,
        "eu",
        "eu-doomed",
        Some(&format!("{point}=return(exit)")),
    );
    let status = doomed.exited(Duration::from_secs(15)).await;
    assert_eq!(status.code(), Some(CRASH_EXIT_CODE), "crashed at {point}");

    let mut healthy = Consumer::start(&db, "eu", "eu-healthy", None);
    support::wait_for_state(&db, &[task], TaskState::Delivered, Duration::from_secs(15)).await;
    assert_eq!(healthy.stop().await.code(), Some(0));
    Crashed {
        db,
        receiver,
        task,
        not_before,
    }
}

impl Crashed {
    async fn story(&self) -> Vec<(AttemptOutcome, String)> {
        self.db
            .store
            .attempts(self.task)
            .await
            .unwrap()
            .into_iter()
            .map(|a| (a.outcome, a.lease_owner))
            .collect()
    }

    /// Checks what holds at every boundary, and returns the requests.
    async fn common_checks(&self) -> Vec<crate::support::receiver::Received> {
        let task = self.db.store.task(self.task).await.unwrap().unwrap();
        let requests = self.receiver.requests_to("/hook");
        assert!(!requests.is_empty());
        for r in &requests {
            assert!(r.at >= self.not_before, "a request came before not_before");
            assert_eq!(
                r.header("idempotency-key"),
                Some(task.idempotency_key.as_str())
            );
        }
        requests
    }
}

fn abandoned_then_delivered() -> Vec<(AttemptOutcome, String)> {
    vec![
        (AttemptOutcome::Abandoned, "eu-doomed".into()),
        (AttemptOutcome::Delivered, "eu-healthy".into()),
    ]
}

async fn after_the_claim_commits(backend: Backend) {
    let run = crash_at(backend, failpoint::AFTER_CLAIM, Reply::ok()).await;
    assert_eq!(
        run.common_checks().await.len(),
        1,
        "nothing was sent before the crash"
    );
    assert_eq!(run.story().await, abandoned_then_delivered());
}

async fn before_the_request_is_sent(backend: Backend) {
    let run = crash_at(backend, failpoint::BEFORE_SEND, Reply::ok()).await;
    assert_eq!(run.common_checks().await.len(), 1);
    assert_eq!(run.story().await, abandoned_then_delivered());
}

async fn after_the_response_before_the_finish(backend: Backend) {
    let run = crash_at(backend, failpoint::AFTER_RESPONSE, Reply::ok()).await;
    // The receiver accepted, the commit never happened: the one place a
    // duplicate is the price, and it carries the same key.
    assert_eq!(run.common_checks().await.len(), 2);
    assert_eq!(run.story().await, abandoned_then_delivered());
}

async fn inside_the_finish_transaction(backend: Backend) {
    let run = crash_at(backend, failpoint::IN_FINISH, Reply::ok()).await;
    assert_eq!(run.common_checks().await.len(), 2, "the finish rolled back");
    assert_eq!(run.story().await, abandoned_then_delivered());
}

async fn after_the_finish_commits(backend: Backend) {
    let run = crash_at(backend, failpoint::AFTER_FINISH, Reply::ok()).await;
    assert_eq!(
        run.common_checks().await.len(),
        1,
        "delivered before the crash; no resend"
    );
    assert_eq!(
        run.story().await,
        vec![(AttemptOutcome::Delivered, "eu-doomed".to_owned())]
    );
}

async fn after_a_retry_wait_commits_the_deadline_still_holds(backend: Backend) {
    let run = crash_at(
        backend,
        failpoint::AFTER_FINISH,
        Reply::status(429).retry_after(RetryAfter::Seconds(2)),
    )
    .await;
    let requests = run.common_checks().await;
    assert_eq!(requests.len(), 2);
    let log = run.db.store.attempts(run.task).await.unwrap();
    assert_eq!(log[0].outcome, AttemptOutcome::RetryWait);
    let deadline = log[0].observed.retry_after_deadline.unwrap();
    assert!(
        requests[1].at >= deadline,
        "the retry came at {} before the recorded deadline {deadline}",
        requests[1].at
    );
    assert_eq!(log[1].outcome, AttemptOutcome::Delivered);
    assert_eq!(log[1].lease_owner, "eu-healthy");
}

/// Each boundary, on PostgreSQL and on a SQLite file.
macro_rules! on_every_store {
    ($($name:ident),* $(,)?) => {
        mod postgres {
            use super::Backend;
            $(
                #[actix_rt::test]
                async fn $name() {
                    super::$name(Backend::Postgres).await;
                }
            )*
        }
        mod sqlite {
            use super::Backend;
            $(
                #[actix_rt::test]
                async fn $name() {
                    super::$name(Backend::Sqlite).await;
                }
            )*
        }
    };
}

on_every_store!(
    after_the_claim_commits,
    before_the_request_is_sent,
    after_the_response_before_the_finish,
    inside_the_finish_transaction,
    after_the_finish_commits,
    after_a_retry_wait_commits_the_deadline_still_holds,
);
