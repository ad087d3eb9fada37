//! Finishers meeting on a destination's hour: several sessions finish
//! batches over the same destinations at once, each batch in an order of
//! its own: batches of successes only (which lock no destination, only
//! the hours' rows), and batches with failures (which lock the destination
//! for its streak) and 429s with Retry-After (which pause it, in a
//! transaction) among them.
//! The hour's row is written after the destinations are locked and in id
//! order, so they wait for each other but never deadlock, and every
//! attempt is counted once.

use chrono::Duration;
use remit::domain::{AttemptRecord, ClaimedTask, DestinationId, Region};
use remit::policy::{Decision, Transition};
use remit::store::{DestinationHours, Finish, Store, TransitionOutcome};

use crate::support::{claim, new_task, t0, test_key, Backend, TestDb};

const DESTINATIONS: usize = 8;
const SESSIONS: usize = 4;
const ROUNDS: usize = 60;

/// The n-th finish of a batch: in an even round a 2xx (a batch that
/// locks no destination, once their streaks have ended); in an odd one a
/// 2xx, a 500 (counted against the streak) or a 429 with Retry-After (a
/// pause, in a transaction that locks every destination of the batch).
fn decision(round: usize, n: usize) -> Decision {
    let later = t0() + Duration::hours(3);
    let kind = if round % 2 == 0 { 0 } else { n % 3 };
    let (status, transition, pause) = match kind {
        0 => (200, Transition::Deliver, None),
        1 => (
            500,
            Transition::RetryWait {
                available_at: later,
            },
            None,
        ),
        _ => (
            429,
            Transition::RetryWait {
                available_at: later,
            },
            Some(t0() + Duration::hours(1) + Duration::seconds(1)),
        ),
    };
    Decision {
        transition,
        pause_destination_until: pause,
        record: AttemptRecord {
            http_status: Some(status),
            retry_after_raw: (status == 429).then(|| "1".to_owned()),
            started_at: Some(t0() + Duration::hours(1)),
            received_at: Some(t0() + Duration::hours(1) + Duration::milliseconds(3)),
            ..AttemptRecord::default()
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn finishers_meeting_on_an_hour_never_deadlock() {
    let db = TestDb::on(Backend::Postgres).await;
    let mut dests: Vec<DestinationId> = Vec::new();
    for d in 0..DESTINATIONS {
        dests.push(db.destination(&format!("dest-{d}"), Region::EU).await);
    }
    let per_destination = SESSIONS * ROUNDS;
    for (d, dest) in dests.iter().enumerate() {
        let batch = (0..per_destination)
            .map(|n| new_task(&format!("r{d}-{n}"), dest, Region::EU))
            .collect();
        db.store.schedule_many(batch).await.unwrap();
    }
    db.clock().advance(Duration::hours(1));
    let mut request = claim(Region::EU, "c", (DESTINATIONS * per_destination) as u32);
    request.per_destination_cap = per_destination as u32;
    let claimed = db.store.claim_due(&request).await.unwrap();
    assert_eq!(claimed.len(), DESTINATIONS * per_destination);
    let mut by_destination: Vec<Vec<ClaimedTask>> = vec![Vec::new(); DESTINATIONS];
    for c in claimed {
        let d = dests
            .iter()
            .position(|d| *d == c.task.destination_id)
            .unwrap();
        by_destination[d].push(c);
    }
    let mut stores = Vec::new();
    for _ in 0..SESSIONS {
        stores.push(db.another_store(test_key()).await);
    }
    for round in 0..ROUNDS {
        let mut finishing = Vec::new();
        for (s, store) in stores.iter().enumerate() {
            // One task of each destination, in an order of the session's own.
            let mut order: Vec<usize> = (0..DESTINATIONS).collect();
            order.rotate_left((round + s) % DESTINATIONS);
            if (round + s) % 2 == 1 {
                order.reverse();
            }
            let batch: Vec<Finish> = order
                .iter()
                .enumerate()
                .map(|(n, &d)| {
                    let task = &by_destination[d][round * SESSIONS + s];
                    Finish {
                        lease: task.lease(),
                        destination: task.task.destination_id.clone(),
                        decision: decision(round, n + s),
                    }
                })
                .collect();
            let store = store.clone();
            finishing.push(tokio::spawn(async move { store.finish_many(&batch).await }));
        }
        for finish in finishing {
            let finished = finish.await.unwrap().unwrap_or_else(|e| {
                panic!(
                    "round {round}: a finish failed: {e}: {:?}",
                    std::error::Error::source(&e)
                )
            });
            assert!(finished
                .outcomes
                .iter()
                .all(|o| *o == TransitionOutcome::Applied));
        }
    }
    let mut counted = 0;
    for dest in &dests {
        let hours = db
            .store
            .destination_hours(dest, t0(), t0() + Duration::days(1))
            .await
            .unwrap();
        assert_eq!(hours.len(), 1);
        assert_eq!(hours[0].counts.attempts(), per_destination as u64);
        assert_eq!(hours[0].latency.total(), per_destination as u64);
        counted += hours[0].counts.attempts();
    }
    assert_eq!(counted, (DESTINATIONS * per_destination) as u64);
}
