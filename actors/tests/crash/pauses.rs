//! A destination-wide pause across real processes: two `remit run` of one
//! region against a receiver that opens pauses and answers 429 inside
//! them. No request starts inside a pause once it was committed and
//! announced; only requests already under way may land.

use std::collections::HashSet;
use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::consumer::Consumer;
use crate::support::pausing::PausingReceiver;
use crate::support::{self, Backend, TestDb};

/// How long after the receiver's 429 a request may still arrive: it was
/// already under way, or started before the finish that records the pause
/// committed and its NOTIFY reached the other process.
const UNDER_WAY: Duration = Duration::from_millis(750);

#[actix_rt::test]
async fn two_processes_never_start_a_request_inside_a_pause() {
    two_processes_never_start_a_request_inside_a_pause_on(Backend::Postgres).await;
}

#[actix_rt::test]
async fn two_processes_never_start_a_request_inside_a_pause_on_one_sqlite_file() {
    two_processes_never_start_a_request_inside_a_pause_on(Backend::Sqlite).await;
}

async fn two_processes_never_start_a_request_inside_a_pause_on(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = PausingReceiver::start(12);
    // Both processes up before any work exists, so neither can take it all
    // before the other claims at all.
    let mut consumers = [
        Consumer::start(&db, "eu", "eu-1", None),
        Consumer::start(&db, "eu", "eu-2", None),
    ];
    for consumer in &consumers {
        consumer.ready().await;
    }
    let mut tasks = Vec::new();
    for name in ["a", "b", "c"] {
        let path = format!("/{name}");
        let dest = support::destination(&db, name, Region::EU, &receiver.url(&path), None).await;
        for i in 0..40 {
            tasks.push(support::task(&db, &format!("{name}-{i}"), &dest, Region::EU).await);
        }
    }
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(40)).await;
    for consumer in &mut consumers {
        assert_eq!(consumer.stop().await.code(), Some(0));
    }

    assert!(
        receiver.pauses_opened() >= 6,
        "the receiver paused each destination"
    );
    let late: Vec<_> = receiver
        .inside_pauses()
        .into_iter()
        .filter(|r| r.into_pause > UNDER_WAY)
        .collect();
    assert!(
        late.is_empty(),
        "requests started inside a known pause: {late:?}"
    );
    let owners = db
        .count("SELECT count(DISTINCT consumer_id) AS n FROM attempts WHERE outcome = 'delivered'")
        .await;
    assert_eq!(owners, 2, "both processes took part");
    let delivered: HashSet<String> = receiver.delivered().into_iter().collect();
    assert_eq!(delivered.len(), tasks.len(), "every task delivered");
}
