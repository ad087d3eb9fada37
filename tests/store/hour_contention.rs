//! Finishers meeting on a destination's hour: several sessions finish
//! batches over the same destinations at once, each batch in an order of
//! its own: batches of successes only (which lock no destination, only
//! the hours' rows), and batches with failures (which lock the destination
//! for its streak) and 429s with Retry-After (which pause it, in a
//! transaction) among them. Sessions whose slots coincide meet on the
//! same rows; the rows are written after the destinations are locked and
//! in id order, so they wait for each other but never deadlock (written in
//! a random order, before an hour had slots, PostgreSQL reported a
//! deadlock in the first round), and every attempt is counted once,
//! whichever slots hold it. Then an hour's slots read as one, and folded
//! into one row once the hour has ended.

use chrono::Duration;
use remit::domain::{AttemptRecord, ClaimedTask, DestinationId, Region};
use remit::policy::{Decision, Transition};
use remit::store::{Finish, Leases, Reports, Schedule, TransitionOutcome, Upkeep};

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
            .destination_stats(dest, t0(), t0() + Duration::days(1))
            .await
            .unwrap();
        assert_eq!(hours.len(), 1);
        assert_eq!(hours[0].counts.attempts(), per_destination as u64);
        assert_eq!(hours[0].latency.total(), per_destination as u64);
        counted += hours[0].counts.attempts();
    }
    assert_eq!(counted, (DESTINATIONS * per_destination) as u64);
}

/// An hour's row of `slot` on PostgreSQL, as a finish on a connection of
/// that slot leaves it: `succeeded` 2xx answers, each 1.5 ms, and as many
/// first tries 3 ms late.
fn slot_row(
    destination: &str,
    hour: chrono::DateTime<chrono::Utc>,
    slot: i16,
    succeeded: i32,
) -> String {
    format!(
        "INSERT INTO destination_stats (destination_id, hour, slot, succeeded, latency, lateness) \
         VALUES ('{destination}', '{}', {slot}, {succeeded}, \
                 destination_stats_add(NULL, array_fill(2, ARRAY[{succeeded}])), \
                 destination_stats_add(NULL, array_fill(4, ARRAY[{succeeded}])))",
        hour.to_rfc3339()
    )
}

#[tokio::test]
async fn an_hours_slots_are_read_as_one_and_folded_once_it_ended() {
    let db = TestDb::on(Backend::Postgres).await;
    let crm = db.destination("crm", Region::EU).await;
    let us = db.destination("us-crm", Region::US).await;
    // t0 is 09:00: the 09 o'clock hour in three slots, the 10 o'clock in two.
    let nine = t0();
    let ten = t0() + Duration::hours(1);
    for (hour, slot, n) in [
        (nine, 0, 1),
        (nine, 3, 2),
        (nine, 15, 4),
        (ten, 0, 8),
        (ten, 7, 16),
    ] {
        db.execute(&slot_row(crm.as_str(), hour, slot, n)).await;
    }
    db.execute(&slot_row(us.as_str(), nine, 5, 32)).await;
    let read = |d: DestinationId| {
        let store = db.store.clone();
        async move {
            store
                .destination_stats(&d, t0(), t0() + Duration::days(1))
                .await
                .unwrap()
        }
    };
    let hours = read(crm.clone()).await;
    assert_eq!(
        hours
            .iter()
            .map(|h| (h.hour, h.counts.succeeded))
            .collect::<Vec<_>>(),
        vec![(nine, 7), (ten, 24)]
    );
    // 1.5 ms lies in 1.414..2 ms, 3 ms in 2.828..4 ms.
    assert_eq!(hours[0].latency.total(), 7);
    assert_eq!(
        hours[0].latency.quantile(0.99),
        Some(Duration::milliseconds(2))
    );
    assert_eq!(
        hours[0].lateness.quantile(0.5),
        Some(Duration::milliseconds(4))
    );

    // At 10:30 the 09 o'clock hour has ended: a prune that deletes
    // nothing folds its slots into slot 0, region by region, and leaves
    // the hour under way alone.
    db.clock().set(t0() + Duration::minutes(90));
    let deleted = db
        .store
        .prune_destination_stats(Some(Region::EU), Duration::days(7))
        .await
        .unwrap();
    assert_eq!(deleted, 0);
    let slots = |hour: chrono::DateTime<chrono::Utc>, d: &DestinationId| {
        format!(
            "SELECT count(*) AS n FROM destination_stats WHERE destination_id = '{}' AND hour = '{}'",
            d.as_str(),
            hour.to_rfc3339()
        )
    };
    assert_eq!(db.count(&slots(nine, &crm)).await, 1);
    assert_eq!(db.count(&slots(ten, &crm)).await, 2);
    assert_eq!(db.count(&slots(nine, &us)).await, 1, "another region's");
    assert_eq!(read(crm.clone()).await, hours, "the same counts, folded");
    let folded = "SELECT count(*) AS n FROM destination_stats \
                  WHERE destination_id = 'us-crm' AND slot = 0";
    assert_eq!(db.count(folded).await, 0);
    db.store
        .prune_destination_stats(None, Duration::days(7))
        .await
        .unwrap();
    assert_eq!(db.count(folded).await, 1);
    assert_eq!(read(us).await[0].counts.succeeded, 32);

    // The hours of a destination that no longer exists go with the age,
    // whichever region prunes.
    db.execute(&slot_row("gone", nine, 0, 1)).await;
    db.clock().set(t0() + Duration::days(8));
    let deleted = db
        .store
        .prune_destination_stats(Some(Region::EU), Duration::days(7))
        .await
        .unwrap();
    assert_eq!(deleted, 3, "crm's two hours and the gone destination's");
    let left = "SELECT count(*) AS n FROM destination_stats";
    assert_eq!(db.count(left).await, 1, "us-crm's hour is another region's");
}
