//! A destination's rate changed through the API takes effect in every
//! process of the region, their throttles already holding its tasks
//! included: two runtimes drain a backlog at 2 requests a second; the rate
//! goes to 50 through the first one's API; the receiver sees the new rate
//! from both, more requests within a few seconds of the change than the
//! old rate allows in that time. (The windows are seconds long, not the
//! fraction of one the change takes, so that a loaded machine's delays
//! cannot pass for the old rate.)
//!
//! Each process is judged on the tasks its throttle held when the rate
//! changed (leased to it then, read from the store), not on how the rest
//! of the backlog was shared: the first process hears of the change first
//! and may claim everything still unclaimed. A long lease lets each hold
//! a share of the backlog at the old rate (its rate over a fifth of the
//! lease), and each must send it sooner than the old rate could.

use remit::store::Schedule;
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};
use serde_json::json;

use crate::api::client::Api;
use crate::support::{self, Backend, Receiver, TestDb};

const TASKS: usize = 60;

/// Long enough that each process holds several tasks at the old rate: 2 a
/// second over a fifth of it.
const LEASE_SECONDS: u64 = 60;

/// At least this many of the tasks a process held when the rate changed
/// are sent after it, so that the old rate would need two seconds for
/// them.
const HELD_AT_LEAST: usize = 5;

async fn a_new_rate_reaches_every_process(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let mut runtimes = Vec::new();
    for p in 0..2 {
        let mut config = support::config(&db, Region::EU, &format!("eu-{p}"));
        // Only where the processes are judged (see below): on SQLite a
        // lease that one process's write lost is recovered at its expiry,
        // and the test's quick lease keeps that within the drain's wait.
        if backend == Backend::Postgres {
            config.lease.seconds = LEASE_SECONDS;
        }
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
    let mut held_by = std::collections::BTreeMap::<String, Vec<_>>::new();
    for id in &tasks {
        let task = db.store.task(*id).await.unwrap().expect("the task exists");
        if let (TaskState::Leased, Some(owner)) = (task.state, task.lease_owner) {
            held_by.entry(owner).or_default().push(*id);
        }
    }
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

    // Both processes sent at the new rate: each sent the tasks it held at
    // the change sooner than the old rate could have. At 2 a second with a
    // burst of one, the m-th send after the change starts no sooner than
    // (m - 1) / 2 s after it; each process's last is asked to start within
    // three quarters of that (the new rate needs a fraction of a second,
    // so a loaded machine's delays leave room). On PostgreSQL both
    // processes claim their share; two processes on one SQLite file take
    // turns at its single writer, and one of them may claim everything
    // (the embedded store is meant for one process).
    if backend == Backend::Postgres {
        let held: std::collections::BTreeMap<_, _> = held_by
            .iter()
            .map(|(owner, ids)| (owner, ids.len()))
            .collect();
        assert_eq!(
            held.len(),
            2,
            "both processes hold tasks at the change: {held:?}"
        );
        for (owner, ids) in &held_by {
            let mut starts = Vec::new();
            for id in ids {
                for attempt in db.store.attempts(*id).await.unwrap() {
                    if let Some(at) = attempt.observed.started_at {
                        if attempt.lease_owner == *owner && at > changed {
                            starts.push(at);
                        }
                    }
                }
            }
            starts.sort();
            let sent = starts.len();
            assert!(
                sent >= HELD_AT_LEAST,
                "{owner} sent {sent} of the {} tasks it held after the change: too few to \
                 tell the rates apart ({held:?})",
                ids.len()
            );
            let last = (starts[sent - 1] - changed).to_std().unwrap();
            let old_rate_needs = Duration::from_millis(500) * (sent as u32 - 1);
            assert!(
                last < old_rate_needs * 3 / 4,
                "{owner}'s {sent} sends after the change took {last:?}: the old rate's pace \
                 ({old_rate_needs:?} at least)"
            );
        }
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
