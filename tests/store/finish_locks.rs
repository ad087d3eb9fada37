//! A finish batch that pauses one destination (a 429 with Retry-After)
//! and counts a failure against another takes its destination locks in one
//! pass, in id order, as a token take does: a take holding the first and
//! asking for the second waits for the finish or the finish for it, and
//! neither is aborted as a deadlock.

use chrono::Duration;
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use remit::domain::{AttemptRecord, Region};
use remit::policy::{Decision, Transition};
use remit::store::{Finish, Leases, TransitionOutcome};

use crate::support::{retry_at, t0, TestDb};

#[derive(diesel::QueryableByName)]
struct Pid {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pid: i32,
}

#[tokio::test]
async fn a_pausing_finish_never_deadlocks_with_a_take() {
    let db = TestDb::new().await;
    let first = db.destination("a-first", Region::EU).await;
    let second = db.destination("b-second", Region::EU).await;
    db.task("r1", &first, Region::EU).await;
    db.task("r2", &second, Region::EU).await;
    let claimed = db.claim(Region::EU, "c", 10).await;
    assert_eq!(claimed.len(), 2);
    let lease_of = |d: &remit::domain::DestinationId| {
        claimed
            .iter()
            .find(|c| &c.task.destination_id == d)
            .unwrap()
            .lease()
    };
    let later = t0() + Duration::seconds(30);
    // The paused destination sorts last, the failing one first.
    let paced = Decision {
        transition: Transition::RetryWait {
            available_at: later,
        },
        pause_destination_until: Some(later),
        record: AttemptRecord {
            received_at: Some(t0()),
            http_status: Some(429),
            retry_after_raw: Some("30".into()),
            ..AttemptRecord::default()
        },
    };
    let failing = retry_at(
        db.clock(),
        later,
        AttemptRecord {
            http_status: Some(500),
            ..AttemptRecord::default()
        },
    );
    let batch = vec![
        Finish {
            lease: lease_of(&second),
            destination: second.clone(),
            decision: paced,
        },
        Finish {
            lease: lease_of(&first),
            destination: first.clone(),
            decision: failing,
        },
    ];

    // Another transaction holds the first destination, as a take that has
    // locked it and will ask for the second next.
    let mut take = db.conn().await;
    take.batch_execute("BEGIN; SELECT id FROM destinations WHERE id = 'a-first' FOR NO KEY UPDATE")
        .await
        .unwrap();
    let take_pid = diesel::sql_query("SELECT pg_backend_pid() AS pid")
        .get_result::<Pid>(&mut take)
        .await
        .unwrap()
        .pid;
    let store = db.store.clone();
    let finishing = tokio::spawn(async move { store.finish_many(&batch).await });
    // Wait until the finish waits on the take.
    let blocked = format!(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE {take_pid} = ANY(pg_blocking_pids(pid))"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while db.count(&blocked).await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the finish never waited on the take"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The take asks for the second destination: the finish holds none yet.
    take.batch_execute("SELECT id FROM destinations WHERE id = 'b-second' FOR NO KEY UPDATE")
        .await
        .expect("the take is not aborted as a deadlock");
    take.batch_execute("COMMIT").await.unwrap();
    let finished = finishing.await.unwrap().expect("the finish is not aborted");
    assert_eq!(
        finished.outcomes,
        vec![TransitionOutcome::Applied, TransitionOutcome::Applied]
    );
}
