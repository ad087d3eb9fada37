//! A destination's rate changed through the API takes effect in every
//! process of the region, their throttles already holding its tasks
//! included: two runtimes drain a backlog at 2 requests a second; the rate
//! goes to 50 through the first one's API; the receiver sees the new rate
//! from both, more requests within a few seconds of the change than the
//! old rate allows in that time. (The windows are seconds long, not the
//! fraction of one the change takes, so that a loaded machine's delays
//! cannot pass for the old rate.)

use remit::store::Schedule;
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};
use serde_json::json;

use crate::api::client::Api;
use crate::support::{self, Backend, Receiver, TestDb};

const TASKS: usize = 60;

/// How long after the change each process's share of the new rate is
/// looked for (on PostgreSQL, where both claim).
const WINDOW: Duration = Duration::from_secs(4);

async fn a_new_rate_reaches_every_process(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let mut runtimes = Vec::new();
    for p in 0..2 {
        let config = support::config(&db, Region::EU, &format!("eu-{p}"));
        let store = db.another_store(support::db::test_key()).await;
        runtimes.push(support::start(config, &store).await);
    }
    let api = Api::new(&runtimes[0]);
    let (status, view) = api
        .patch(
            "/v1/destinations/crm",
            json!({"rate_per_second": 2, "burst": 1}),
        )
        .await;
    assert_eq!(status, 200, "{view}");
    let mut tasks = Vec::with_capacity(TASKS);
    for i in 0..TASKS {
        tasks.push(support::task(&db, &format!("r{i}"), &dest, Region::EU).await);
    }
    // The slow rate holds, across both processes.
    receiver
        .wait_until(Duration::from_secs(10), "the first requests", |r| {
            r.len() >= 4
        })
        .await;
    // Judged against the window this machine actually gave: 2 a second
    // over it, plus the burst and one already under way.
    let slow_start = Instant::now();
    let before = receiver.requests_to("/hook").len();
    actix_rt::time::sleep(Duration::from_millis(1500)).await;
    let during = receiver.requests_to("/hook").len() - before;
    let window = slow_start.elapsed().as_secs_f64();
    let allowed = (2.0 * window).ceil() as usize + 2;
    assert!(
        during <= allowed,
        "{during} requests in {window:.2} s at 2 a second (burst 1)"
    );

    let (status, view) = api
        .patch(
            "/v1/destinations/crm",
            json!({"rate_per_second": 50, "burst": 5}),
        )
        .await;
    assert_eq!(status, 200, "{view}");
    let changed = chrono::Utc::now();
    let at_change = receiver.requests_to("/hook").len();
    // Twenty more, the twentieth sooner than the old rate could send it
    // (one at once, then one every half second: 9.5 s). Waited for with
    // room, and judged by the receiver's own times, so a loaded machine's
    // delays fail it only if they are as slow as the old rate.
    receiver
        .wait_until(
            Duration::from_secs(30),
            "twenty requests after the change",
            |r| r.len() >= at_change + 20,
        )
        .await;
    let twentieth = receiver.requests_to("/hook")[at_change + 19].at;
    assert!(
        twentieth - changed < chrono::Duration::milliseconds(9_500),
        "the twentieth request after the change came {:?} after it: the old rate's pace",
        (twentieth - changed).to_std()
    );
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(20)).await;

    // Both processes sent at the new rate: each sent, within WINDOW of the
    // change, more than half of what the old rate allowed the two together.
    let window = changed + chrono::Duration::from_std(WINDOW).unwrap();
    let mut sent_by = std::collections::BTreeMap::<String, usize>::new();
    for id in &tasks {
        for attempt in db.store.attempts(*id).await.unwrap() {
            if attempt
                .observed
                .started_at
                .is_some_and(|at| at > changed && at <= window)
            {
                *sent_by.entry(attempt.lease_owner.clone()).or_default() += 1;
            }
        }
    }
    // On PostgreSQL both processes claim their share; two processes on one
    // SQLite file take turns at its single writer, and one of them may
    // claim everything (the embedded store is meant for one process).
    if backend == Backend::Postgres {
        assert_eq!(sent_by.len(), 2, "after the change, sent by {sent_by:?}");
        assert!(
            sent_by.values().all(|&n| n >= 5),
            "within {WINDOW:?} of the change: {sent_by:?}"
        );
    }
    for runtime in runtimes {
        runtime.shutdown().await;
    }
}

#[actix_rt::test]
async fn a_new_rate_reaches_every_process_on_postgres() {
    a_new_rate_reaches_every_process(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_new_rate_reaches_every_process_on_sqlite() {
    a_new_rate_reaches_every_process(Backend::Sqlite).await;
}
