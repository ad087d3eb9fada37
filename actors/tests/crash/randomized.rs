//! A randomized round: two consumers per region, a receiver answering a
//! seeded mix of 2xx, 429 (both Retry-After forms), 503 and slow answers,
//! and SIGKILL at random moments followed by restarts; half the tasks wait
//! in lines of an ordering key, and while the consumers run, more tasks
//! join those lines with a `not_before` earlier than the lines' own (so a
//! claim of a line's head may be running when its new head commits).
//! Afterwards every promise is checked, that no line ever had two
//! requests open at the receiver at once, and that each line's first tasks
//! went in order. A failure prints `seed=N`; rerun it with `REMIT_SEED=N`.

use remit::store::Schedule;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use chrono::Utc;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use remit::domain::{AttemptOutcome, Region, TaskId, TaskState};

use crate::consumer::Consumer;
use crate::support::{self, Backend, Receiver, Reply, RetryAfter, TestDb};

const TASKS_PER_REGION: usize = 120;
const KILLING_FOR: Duration = Duration::from_secs(10);

/// Slots are named `<region>-<letter>`.
fn region_of(slot: &str) -> &str {
    &slot[..2]
}

fn random_reply(rng: &mut impl Rng) -> Reply {
    match rng.random_range(0..100) {
        0..55 => Reply::ok(),
        55..65 => Reply::status(429).retry_after(RetryAfter::Seconds(1)),
        65..72 => Reply::status(429).retry_after(RetryAfter::DateIn(Duration::from_secs(1))),
        72..80 => Reply::status(503).retry_after(RetryAfter::Seconds(1)),
        80..86 => Reply::status(503),
        86..90 => Reply::status(500),
        _ => Reply::ok().delayed(Duration::from_millis(rng.random_range(100..400))),
    }
}

#[actix_rt::test]
async fn kills_at_random_moments_lose_nothing() {
    kills_at_random_moments_lose_nothing_on(Backend::Postgres).await;
}

#[actix_rt::test]
async fn kills_at_random_moments_lose_nothing_on_one_sqlite_file() {
    kills_at_random_moments_lose_nothing_on(Backend::Sqlite).await;
}

async fn kills_at_random_moments_lose_nothing_on(backend: Backend) {
    let seed: u64 = std::env::var("REMIT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("seed={seed}");
    let mut rng = StdRng::seed_from_u64(seed);

    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let mut tasks: Vec<(TaskId, Region)> = Vec::new();
    for region in [Region::US, Region::EU] {
        let mut destinations = Vec::new();
        for d in 0..3 {
            let path = format!("/{region}-{d}");
            let replies = (0..400).map(|_| random_reply(&mut rng)).collect();
            receiver.script(&path, replies, Reply::ok());
            let id = format!("{region}-{d}");
            destinations
                .push(support::destination(&db, &id, region, &receiver.url(&path), None).await);
        }
        for i in 0..TASKS_PER_REGION {
            let not_before = Utc::now() + chrono::Duration::milliseconds(rng.random_range(0..3000));
            let dest = &destinations[i % destinations.len()];
            let reminder = format!("{region}-{i}");
            // Every other task waits in a line: twelve lines of five per
            // region, four on each destination.
            let id = if i % 2 == 0 {
                let key = format!("line-{}", i % 8);
                support::task_in_line(&db, &reminder, dest, region, not_before, &key).await
            } else {
                support::task_at(&db, &reminder, dest, region, not_before).await
            };
            tasks.push((id, region));
        }
    }

    // Four consumers; kill one at random every few hundred milliseconds and
    // start a fresh one under a new name in its place.
    let slots = ["us-a", "us-b", "eu-a", "eu-b"];
    let mut incarnation = [0u32; 4];
    let mut consumers: Vec<Consumer> = slots
        .iter()
        .map(|s| Consumer::start(&db, region_of(s), &format!("{s}-0"), None))
        .collect();
    let started = Instant::now();
    let mut kills = 0;
    let original = tasks.clone();
    let mut joined = 0;
    while started.elapsed() < KILLING_FOR {
        // Newcomers due earlier than what waits in their lines, scheduled
        // while the lines are being claimed.
        for _ in 0..rng.random_range(1..4) {
            let region = if rng.random_bool(0.5) {
                Region::US
            } else {
                Region::EU
            };
            let dest =
                remit::domain::DestinationId::new(&format!("{region}-{}", rng.random_range(0..3)))
                    .unwrap();
            let key = format!("line-{}", 2 * rng.random_range(0..4));
            let not_before = Utc::now() - chrono::Duration::milliseconds(rng.random_range(0..2000));
            let reminder = format!("{region}-joined-{joined}");
            joined += 1;
            let id = support::task_in_line(&db, &reminder, &dest, region, not_before, &key).await;
            tasks.push((id, region));
        }
        actix_rt::time::sleep(Duration::from_millis(rng.random_range(150..500))).await;
        let victim = rng.random_range(0..slots.len());
        consumers[victim].kill();
        kills += 1;
        incarnation[victim] += 1;
        let name = format!("{}-{}", slots[victim], incarnation[victim]);
        consumers[victim] = Consumer::start(&db, region_of(slots[victim]), &name, None);
    }

    let ids: Vec<TaskId> = tasks.iter().map(|(id, _)| *id).collect();
    support::wait_for_state(&db, &ids, TaskState::Delivered, Duration::from_secs(45)).await;
    for consumer in &mut consumers {
        assert_eq!(consumer.stop().await.code(), Some(0), "seed={seed}");
    }
    eprintln!(
        "seed={seed}: {kills} kills, {} requests",
        receiver.requests().len()
    );
    assert!(kills >= 15, "seed={seed}: only {kills} kills");

    let requests = receiver.requests();
    one_request_of_a_line_open_at_a_time(&db, &tasks, &requests, seed).await;
    // The tasks known from the start keep their order; a newcomer goes
    // after any task of its line already attempted when it joined.
    lines_went_in_order(&db, &original, &requests, seed).await;
    let mut by_key: HashMap<&str, Vec<&crate::support::receiver::Received>> = HashMap::new();
    for r in &requests {
        by_key
            .entry(r.header("idempotency-key").unwrap())
            .or_default()
            .push(r);
    }
    for (id, region) in &tasks {
        let task = db.store.task(*id).await.unwrap().unwrap();
        let sent = by_key
            .get(task.idempotency_key.as_str())
            .cloned()
            .unwrap_or_default();
        assert!(
            !sent.is_empty(),
            "seed={seed}: {id} delivered without a request"
        );
        for r in &sent {
            // Never early, and every copy is the same logical webhook.
            assert!(
                r.at >= task.not_before,
                "seed={seed}: {id} sent before not_before"
            );
            assert_eq!(r.header("webhook-id"), Some(task.idempotency_key.as_str()));
            let body = format!(r#"{{"reminder":"{}"}}"#, task.reminder_id);
            assert_eq!(
                r.body,
                body.as_bytes(),
                "seed={seed}: a body under another task's key"
            );
            assert!(
                r.path.starts_with(&format!("/{region}-")),
                "seed={seed}: wrong region"
            );
        }
        let log = db.store.attempts(*id).await.unwrap();
        let delivered = log
            .iter()
            .filter(|a| a.outcome == AttemptOutcome::Delivered)
            .count();
        assert_eq!(
            delivered, 1,
            "seed={seed}: {id} delivered {delivered} times in the log"
        );
        for attempt in &log {
            assert!(
                attempt.lease_owner.starts_with(region.as_str()),
                "seed={seed}: {id} of {region} touched by {}",
                attempt.lease_owner
            );
            // A committed Retry-After deadline holds for every later request.
            if let (AttemptOutcome::RetryWait, Some(deadline), Some(received)) = (
                attempt.outcome,
                attempt.observed.retry_after_deadline,
                attempt.observed.received_at,
            ) {
                for r in sent.iter().filter(|r| r.at > received) {
                    assert!(
                        r.at >= deadline,
                        "seed={seed}: {id} resent at {} before its deadline {deadline}",
                        r.at
                    );
                }
            }
        }
    }
}

/// Within each line (same destination and ordering key), no request
/// arrived while another request of the line had not been answered:
/// newcomers, kills and retries included.
async fn one_request_of_a_line_open_at_a_time(
    db: &TestDb,
    tasks: &[(TaskId, Region)],
    requests: &[crate::support::receiver::Received],
    seed: u64,
) {
    let mut line_of: HashMap<String, (String, String)> = HashMap::new();
    for (id, _) in tasks {
        let task = db.store.task(*id).await.unwrap().unwrap();
        if let Some(key) = &task.ordering_key {
            line_of.insert(
                task.idempotency_key.as_str().to_owned(),
                (task.destination_id.to_string(), key.to_string()),
            );
        }
    }
    let mut lines: HashMap<&(String, String), Vec<&crate::support::receiver::Received>> =
        HashMap::new();
    for r in requests {
        if let Some(line) = r.header("idempotency-key").and_then(|k| line_of.get(k)) {
            lines.entry(line).or_default().push(r);
        }
    }
    assert!(!lines.is_empty(), "seed={seed}: no line was sent to");
    for ((destination, key), mut sent) in lines {
        sent.sort_by_key(|r| r.at);
        for pair in sent.windows(2) {
            assert!(
                pair[1].at >= pair[0].answered_at,
                "seed={seed}: line {key} of {destination}: a request arrived at {} while \
                 one sent at {} was open until {}",
                pair[1].at,
                pair[0].at,
                pair[0].answered_at
            );
        }
    }
}

/// Ordering: within each line (same destination and ordering key, in
/// order of `not_before`, then id) every request for a task arrived after
/// every request for the task before it, kills and retries included.
async fn lines_went_in_order(
    db: &TestDb,
    tasks: &[(TaskId, Region)],
    requests: &[crate::support::receiver::Received],
    seed: u64,
) {
    let mut lines: HashMap<(String, String), Vec<remit::domain::Task>> = HashMap::new();
    for (id, _) in tasks {
        let task = db.store.task(*id).await.unwrap().unwrap();
        if let Some(key) = &task.ordering_key {
            lines
                .entry((task.destination_id.to_string(), key.to_string()))
                .or_default()
                .push(task);
        }
    }
    assert!(!lines.is_empty(), "seed={seed}: no lines to check");
    let arrivals = |task: &remit::domain::Task| -> Vec<chrono::DateTime<Utc>> {
        requests
            .iter()
            .filter(|r| r.header("idempotency-key") == Some(task.idempotency_key.as_str()))
            .map(|r| r.at)
            .collect()
    };
    for ((destination, key), mut line) in lines {
        line.sort_by_key(|t| (t.not_before, t.id));
        for pair in line.windows(2) {
            let last_of_earlier = arrivals(&pair[0]).into_iter().max();
            let first_of_later = arrivals(&pair[1]).into_iter().min();
            if let (Some(earlier), Some(later)) = (last_of_earlier, first_of_later) {
                assert!(
                    later >= earlier,
                    "seed={seed}: line {key} of {destination}: {} sent at {later} before {} was done ({earlier})",
                    pair[1].id,
                    pair[0].id
                );
            }
        }
    }
}
