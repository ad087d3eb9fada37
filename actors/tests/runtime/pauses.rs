//! A destination-wide pause that every send obeys: two runtimes of one
//! region against a receiver that opens pauses and answers 429 inside
//! them. No request may start inside a pause once the pause was committed
//! and announced; only requests already under way may land.

use std::collections::HashSet;
use std::time::Duration;

use remit::domain::{Region, TaskState};

use crate::support::pausing::PausingReceiver;
use crate::support::{self, TestDb};

/// How long after the receiver's 429 a request may still arrive: it was
/// already under way, or started before the finish that records the pause
/// committed and its NOTIFY reached the other process (milliseconds here).
const UNDER_WAY: Duration = Duration::from_millis(250);

#[actix_rt::test]
async fn no_request_starts_inside_a_pause_in_any_process() {
    let db = TestDb::with_database_clock().await;
    let receiver = PausingReceiver::start(12);
    let mut tasks = Vec::new();
    for name in ["a", "b", "c"] {
        let path = format!("/{name}");
        let dest = support::destination(&db, name, Region::Eu, &receiver.url(&path), None).await;
        for i in 0..40 {
            tasks.push(support::task(&db, &format!("{name}-{i}"), &dest, Region::Eu).await);
        }
    }
    let mut runtimes = Vec::new();
    for consumer in ["eu-1", "eu-2"] {
        let mut config = support::config(&db, Region::Eu, consumer);
        config.retry.backoff_base_ms = 20;
        let store = db.another_store(support::db::test_key()).await;
        runtimes.push(support::start(config, &store).await);
    }
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(40)).await;
    for runtime in runtimes {
        runtime.shutdown().await;
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
    let delivered: HashSet<String> = receiver.delivered().into_iter().collect();
    assert_eq!(delivered.len(), tasks.len(), "every task delivered");
}
