//! A quiet region sends each reminder within milliseconds of its deadline:
//! the idle Claimer sleeps until the next due time the store reports, not
//! for its idle interval, and never wakes early.

use std::time::Duration;

use chrono::Utc;
use remit::domain::{Region, TaskState};

use crate::support::{self, Backend, Receiver, TestDb};

/// Sparse reminders, a few hundred milliseconds apart.
const REMINDERS: i64 = 8;
const SPACING_MS: i64 = 170;
const LEAD_MS: i64 = 400;

#[actix_rt::test]
async fn sparse_reminders_go_out_on_time_on_postgres() {
    sparse_reminders_go_out_on_time(Backend::Postgres).await;
}

#[actix_rt::test]
async fn sparse_reminders_go_out_on_time_on_sqlite() {
    sparse_reminders_go_out_on_time(Backend::Sqlite).await;
}

async fn sparse_reminders_go_out_on_time(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::US, &receiver.url("/hook"), None).await;
    let mut config = support::config(&db, Region::US, "us-1");
    // An idle poll far longer than the test: only the due times the store
    // reports (and the wake-ups of new work) can make the reminders punctual.
    config.claim.idle_poll_ms = 60_000;

    // Half scheduled before the runtime starts (its first claim must learn
    // of them), half while it idles (the wake-up of the schedule must).
    let start = Utc::now() + chrono::Duration::milliseconds(LEAD_MS);
    let due = |i: i64| start + chrono::Duration::milliseconds(i * SPACING_MS);
    let mut tasks = Vec::new();
    for i in 0..REMINDERS / 2 {
        tasks.push(support::task_at(&db, &format!("r{i}"), &dest, Region::US, due(i)).await);
    }
    let runtime = support::start(config, &db.store).await;
    for i in REMINDERS / 2..REMINDERS {
        tasks.push(support::task_at(&db, &format!("r{i}"), &dest, Region::US, due(i)).await);
    }
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(20)).await;
    runtime.shutdown().await;

    let received = receiver.requests_to("/hook");
    assert_eq!(received.len(), REMINDERS as usize, "each reminder once");
    let mut lateness_ms = Vec::new();
    for request in &received {
        let body = String::from_utf8_lossy(&request.body);
        let i: i64 = (0..REMINDERS)
            .find(|i| body.contains(&format!(r#""r{i}""#)))
            .expect("the body names its reminder");
        lateness_ms.push((request.at - due(i)).num_milliseconds());
    }
    lateness_ms.sort_unstable();
    eprintln!("{backend:?}: lateness after not_before, ms: {lateness_ms:?}");
    assert!(lateness_ms[0] >= 0, "sent early: {lateness_ms:?}");
    // A generous bound for a shared machine (the load harness measures the
    // real figure): before, a quiet region sent up to an idle poll late.
    assert!(
        *lateness_ms.last().unwrap() < 250,
        "late by more than a quarter second: {lateness_ms:?}"
    );
}
