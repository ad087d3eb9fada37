//! Several database sessions claiming one region at once.

use remit::store::{Leases, Rates, TransitionOutcome};
use std::collections::{HashMap, HashSet};

use chrono::Duration;
use remit::domain::{AttemptRecord, Region, TaskId};

use crate::support::{claim, Backend, TestDb};

const CLAIMERS: usize = 4;
const TASKS: usize = 120;
const ROUNDS: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_row_is_ever_held_by_two_live_leases() {
    two_live_leases_never_hold_a_row(Backend::Postgres).await;
}

/// Each store is a connection of its own on one file, as separate
/// processes would be: their claims are serialized by SQLite's write lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_row_is_ever_held_by_two_live_leases_on_one_sqlite_file() {
    two_live_leases_never_hold_a_row(Backend::Sqlite).await;
}

async fn two_live_leases_never_hold_a_row(backend: Backend) {
    let db = TestDb::on(backend).await;
    let mut dests = Vec::new();
    for d in 0..6 {
        dests.push(db.destination(&format!("dest-{d}"), Region::EU).await);
    }
    for t in 0..TASKS {
        db.task(&format!("r{t}"), &dests[t % dests.len()], Region::EU)
            .await;
    }
    // Each claimer is a separate pool, so separate sessions.
    let mut stores = Vec::new();
    for _ in 0..CLAIMERS {
        stores.push(db.another_store(crate::support::test_key()).await);
    }

    let mut delivered: HashSet<TaskId> = HashSet::new();
    for round in 0..ROUNDS {
        let claims = futures_join_all(stores.iter().enumerate().map(|(i, store)| {
            let request = claim(Region::EU, &format!("eu-{i}"), 7);
            let store = store.clone();
            async move { store.claim_due(&request).await.unwrap() }
        }))
        .await;

        let mut held: HashMap<TaskId, i64> = HashMap::new();
        assert!(claims.iter().all(|c| c.len() <= 7), "the limit holds");
        for claimed in claims.iter().flatten() {
            assert!(
                held.insert(claimed.task.id, claimed.lease_token).is_none(),
                "round {round}: {} claimed twice",
                claimed.task.id
            );
            assert!(
                !delivered.contains(&claimed.task.id),
                "a delivered row was claimed"
            );
        }
        // Half the claimers deliver; the others "crash" and their leases
        // expire before the next round.
        for (i, claimed) in claims.iter().enumerate() {
            if (i + round) % 2 == 0 {
                for c in claimed {
                    let outcome = stores[i]
                        .finish(
                            &c.lease(),
                            &c.task.destination_id,
                            &crate::support::delivered(AttemptRecord::default()),
                        )
                        .await
                        .unwrap();
                    assert_eq!(outcome, TransitionOutcome::Applied);
                    delivered.insert(c.task.id);
                }
            }
        }
        db.clock().advance(Duration::seconds(31));
    }

    assert_eq!(delivered.len(), TASKS, "every task delivered exactly once");
    assert_eq!(
        db.count("SELECT count(*) AS n FROM tasks WHERE state = 'delivered'")
            .await,
        TASKS as i64
    );
    assert_eq!(
        db.count(
            "SELECT count(*) AS n FROM (SELECT task_id FROM attempts WHERE outcome = 'delivered' \
             GROUP BY task_id HAVING count(*) > 1) twice"
        )
        .await,
        0
    );
}

/// Runs the futures concurrently and keeps their order.
async fn futures_join_all<F: std::future::Future + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

/// A batch of finishes that pauses several destinations and token takes
/// over the same destinations lock their rows in one order (by id), so
/// however their asks are ordered they never deadlock, run together many
/// times from several sessions.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pauses_and_token_takes_never_deadlock() {
    use remit::domain::AttemptRecord;
    use remit::policy::{Decision, Transition};
    use remit::store::{Finish, RateRequest};

    const DESTINATIONS: usize = 8;
    const ROUNDS: usize = 400;
    let db = TestDb::on(Backend::Postgres).await;
    let mut dests = Vec::new();
    for d in 0..DESTINATIONS {
        dests.push(db.destination(&format!("dest-{d}"), Region::EU).await);
        db.task(&format!("r{d}"), &dests[d], Region::EU).await;
    }
    db.clock().advance(Duration::hours(1));
    let claimed = db
        .store
        .claim_due(&claim(Region::EU, "c", DESTINATIONS as u32))
        .await
        .unwrap();
    assert_eq!(claimed.len(), DESTINATIONS);
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(db.another_store(crate::support::test_key()).await);
    }
    for round in 0..ROUNDS {
        // Each side sees the destinations in an order of its own.
        let mut order: Vec<usize> = (0..DESTINATIONS).collect();
        order.rotate_left(round % DESTINATIONS);
        if round % 2 == 1 {
            order.reverse();
        }
        // Batches of different sizes, whose rows a planner might visit in
        // different orders.
        let paused: Vec<usize> = order
            .iter()
            .copied()
            .filter(|i| (i + round) % 3 != 0)
            .collect();
        // Stale leases: the finishes are fenced, but their pauses are
        // written first, in the same transaction, as for a 429.
        let batch: Vec<Finish> = paused
            .iter()
            .map(|&i| {
                let mut lease = claimed[i].lease();
                lease.token -= 1_000;
                Finish {
                    lease,
                    destination: claimed[i].task.destination_id.clone(),
                    decision: Decision {
                        transition: Transition::RetryWait {
                            available_at: crate::support::t0() + Duration::hours(2),
                        },
                        pause_destination_until: Some(
                            crate::support::t0() + Duration::hours(1) + Duration::seconds(1),
                        ),
                        record: AttemptRecord {
                            http_status: Some(429),
                            ..AttemptRecord::default()
                        },
                    },
                }
            })
            .collect();
        let finishing = {
            let store = stores[0].clone();
            tokio::spawn(async move { store.finish_many(&batch).await.map(|_| ()) })
        };
        let takes: Vec<_> = (1..stores.len())
            .map(|s| {
                let store = stores[s].clone();
                let mut asks: Vec<RateRequest> = order
                    .iter()
                    .map(|&i| RateRequest {
                        destination: dests[i].clone(),
                        rate_per_second: 100.0,
                        burst: 10,
                        want: 1,
                    })
                    .collect();
                asks.rotate_left(s);
                tokio::spawn(async move { store.take_tokens_many(&asks).await.map(|_| ()) })
            })
            .collect();
        finishing.await.unwrap().unwrap_or_else(|e| {
            panic!(
                "round {round}: the pauses failed: {e}: {:?}",
                std::error::Error::source(&e)
            )
        });
        for take in takes {
            take.await.unwrap().unwrap_or_else(|e| {
                panic!(
                    "round {round}: a take failed: {e}: {:?}",
                    std::error::Error::source(&e)
                )
            });
        }
    }
}
