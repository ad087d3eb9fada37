//! Every attempt-ending transition writes exactly one attempt row.

use chrono::Duration;
use rand::rngs::StdRng;
use rand::SeedableRng;
use remit::domain::{AttemptOutcome, AttemptRecord, FailureReason, Region, TaskState};
use remit::policy::{decide, Observed, RetryPolicy, TransportError};
use remit::store::{Leases, Schedule, TransitionOutcome};

use crate::support::{t0, TestDb};

#[tokio::test]
async fn each_finish_appends_one_row_with_what_the_attempt_saw() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::EU).await;
    let id = db.task("r1", &dest, Region::EU).await;
    let policy = RetryPolicy::default();
    let mut rng = StdRng::seed_from_u64(3);

    // Attempt 1: 429 with an HTTP-date; attempt 2: a timeout; attempt 3: 200.
    let responses = [
        Ok((429, Some("Thu, 13 Aug 2026 09:02:02 GMT".to_owned()))),
        Err(TransportError::Timeout),
        Ok((200, None)),
    ];
    for (n, response) in responses.into_iter().enumerate() {
        let c = db.claim(Region::EU, "eu-3", 1).await.remove(0);
        let now = db.clock().now_param().unwrap();
        let observed = Observed {
            attempt: c.task.attempt_count as u32,
            retry_horizon_at: c.task.retry_horizon_at,
            started_at: now,
            received_at: now + Duration::seconds(2),
            server_date: None,
            response,
        };
        let decision = decide(&observed, &policy, &mut rng);
        let outcome = db.store.finish(&c.lease(), &dest, &decision).await.unwrap();
        assert_eq!(outcome, TransitionOutcome::Applied);
        let log = db.store.attempts(id).await.unwrap();
        assert_eq!(log.len(), n + 1, "exactly one row per finished attempt");
        let row = log.last().unwrap();
        assert_eq!(row.attempt_number, n as i32 + 1);
        assert_eq!(row.lease_token, c.lease_token);
        assert_eq!(row.lease_owner, "eu-3");
        assert_eq!(row.observed, decision.record);
        // The consumer's clock runs two seconds ahead of the database's:
        // what it measured is a wait, added to the database's now.
        assert_eq!(
            row.next_available_at,
            decision.retry_delay().map(|wait| now + wait)
        );
        if let Some(next) = row.next_available_at {
            db.clock().set(next);
        }
        if let Some(pause) = decision.pause_delay() {
            db.clock()
                .set(db.clock().now_param().unwrap().max(now + pause));
        }
    }

    let log = db.store.attempts(id).await.unwrap();
    assert_eq!(
        log.iter().map(|a| a.outcome).collect::<Vec<_>>(),
        [
            AttemptOutcome::RetryWait,
            AttemptOutcome::RetryWait,
            AttemptOutcome::Delivered
        ]
    );
    assert_eq!(
        log[0].observed.retry_after_raw.as_deref(),
        Some("Thu, 13 Aug 2026 09:02:02 GMT")
    );
    assert_eq!(
        log[0].next_available_at,
        Some(t0() + Duration::seconds(120)),
        "the receiver's date as a wait from our receipt, on the database's clock, not jittered"
    );
    assert_eq!(log[1].observed.transport_error.as_deref(), Some("timeout"));
    assert_eq!(log[2].observed.http_status, Some(200));
    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::Delivered);
    assert_eq!(task.last_status, Some(200));
}

#[tokio::test]
async fn a_failure_records_its_reason() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    let id = db.task("r1", &dest, Region::US).await;
    let c = db.claim(Region::US, "us-1", 1).await.remove(0);
    let record = AttemptRecord {
        http_status: Some(410),
        ..AttemptRecord::default()
    };
    db.store
        .fail(&c.lease(), &FailureReason::Status(410), &record)
        .await
        .unwrap();
    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::Failed);
    assert_eq!(task.failure_reason.as_deref(), Some("http_410"));
    assert_eq!(task.last_status, Some(410));
    let log = db.store.attempts(id).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, AttemptOutcome::Failed);
}
