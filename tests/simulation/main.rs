//! A seeded simulation of the schedule: consumers claim, get each task
//! ready through the runtime's own step (`delivery::before_request`)
//! while store faults hit its reads and hand-backs, send
//! through a fake transport (2xx, 429 with either Retry-After form, 5xx,
//! timeouts, refused addresses), finish through the real policy, release,
//! extend and crash, all on a fake clock over `MemStore` (which the
//! conformance suite holds to PostgreSQL's behaviour), and the same worlds
//! over the embedded SQLite store. Meanwhile an operator cancels tasks,
//! reschedules them (earlier or later than now, now and then with a new
//! payload, bringing ended ones back), erases payloads and brings a
//! destination's retries forward, often on a task in flight, and each
//! process's periodic step settles the changes that waited for an attempt.
//!
//! The five promises are checked after every step, with the deadline as
//! last moved (never claimed or sent before it) and a receiver's
//! Retry-After holding whatever the operator does; at every claim and send
//! that a line (same destination and ordering key) goes in order, one task
//! on its way at a time, the task an operator moved taking its new place.
//! Of the operator's changes: every answer against the row just before
//! (the key kept, the payload replaced, the horizon's length kept); a task
//! cancelled or erased is never claimed again unless a reschedule brings
//! it back, and has ended once nothing waits; a change in flight waits on
//! the row as asked, its row is never claimed, and once settled the row is
//! what the change says (a lost lease's attempt logged `abandoned`); an
//! erased payload is never read for a send (only an attempt already
//! holding the bytes sends them); a send carries the payload last written
//! before its claim, or since.
//!
//! `SIM_RUNS` (default 60) runs of `SIM_STEPS` (default 1500) steps over
//! the model, and `SIM_SQLITE_RUNS` (default 2) of `SIM_SQLITE_STEPS`
//! (default 1000) over SQLite files, where every transaction commits to
//! disk;
//! `SIM_SEED` fixes the first seed. A failure names its `seed=N`; rerun it
//! with `SIM_SEED=N SIM_RUNS=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod world;

use std::time::Instant;

use remit::store::{Database, DatabaseConfig};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test]
async fn thousands_of_seeded_schedules_keep_every_promise() {
    let runs = env("SIM_RUNS", 60);
    let steps = env("SIM_STEPS", 1500);
    let first = env("SIM_SEED", rand::random::<u32>().into());
    let started = Instant::now();
    let mut totals = world::Totals::default();
    for seed in first..first + runs {
        let outcome = world::World::new(seed).run(steps).await;
        totals.add(&outcome);
    }
    report("model", first, runs, &totals, started);
}

/// The same worlds on SQLite files: each transaction is real, so fewer
/// runs fit in the same time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_schedules_keep_every_promise_on_sqlite() {
    let runs = env("SIM_SQLITE_RUNS", 2);
    let steps = env("SIM_SQLITE_STEPS", 1000);
    let first = env("SIM_SEED", rand::random::<u32>().into());
    let started = Instant::now();
    let mut totals = world::Totals::default();
    for seed in first..first + runs {
        let dir = std::env::temp_dir().join(format!("remit-sim-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("remit.db").display());
        let clock = world::clock();
        let store = Database::connect(&DatabaseConfig::new(url), world::key())
            .await
            .unwrap()
            .with_clock(clock.clone());
        let outcome = world::World::on(seed, store, clock).run(steps).await;
        totals.add(&outcome);
        let _ = std::fs::remove_dir_all(&dir);
    }
    report("sqlite", first, runs, &totals, started);
}

fn report(store: &str, first: u64, runs: u64, totals: &world::Totals, started: Instant) {
    let elapsed = started.elapsed().as_secs_f64();
    eprintln!(
        "simulation on {store}: seeds {first}..{}: {} steps ({:.0}/s), {} tasks, {} sends, {} crashes, {} fenced finishes, {} answers lost to crashes (each resent under the same key), {} store faults before a request ({} outlasting the lease), 0 violations",
        first + runs,
        totals.steps,
        totals.steps as f64 / elapsed,
        totals.tasks,
        totals.sends,
        totals.crashes,
        totals.fenced,
        totals.duplicates,
        totals.store_faults,
        totals.gave_up,
    );
    let c = &totals.changes;
    eprintln!(
        "  operator's changes on {store}: {} cancels ({} after an attempt), {} moves ({} bringing an ended task back, {} after an attempt, {} refused), {} erasures ({} sends of bytes held before), {} retries made due now, {} waiting changes settled ({} after a lease ran out)",
        c.cancelled + c.cancelled_after_attempt,
        c.cancelled_after_attempt,
        c.moved + c.moved_after_attempt,
        c.revived,
        c.moved_after_attempt,
        c.refused,
        c.erased,
        c.sent_after_erase,
        c.retried_now,
        c.settled,
        c.abandoned,
    );
}
