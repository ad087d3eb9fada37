//! A LISTEN connection that dies without a word (here: its server process
//! is stopped with SIGSTOP, so the socket stays open and nothing answers,
//! as behind a network that drops packets) is noticed by the listener's
//! ping and replaced within a few seconds.

use std::process::Command;
use std::time::{Duration, Instant};

use remit::domain::Region;
use remit::store::{Database, DatabaseConfig};

use crate::support::{self, TestDb};

/// Resumes the stopped server process however the test ends.
struct Stopped(i64);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.0.to_string()])
            .status();
    }
}

#[actix_rt::test]
async fn a_listener_that_stops_answering_is_replaced_within_seconds() {
    let db = TestDb::with_database_clock().await;
    let name = format!("remit_listen_{}", uuid::Uuid::new_v4().simple());
    let url = format!("{}&application_name={name}", db.url);
    let store = Database::connect(&DatabaseConfig::new(url), support::db::test_key())
        .await
        .unwrap();
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &store).await;
    let listener = format!(
        "SELECT coalesce(max(pid), 0)::bigint AS n FROM pg_stat_activity \
         WHERE application_name = '{name}' AND query LIKE 'LISTEN%' AND state = 'idle'"
    );
    let first = wait_for_listener(&db, &listener, 0, Duration::from_secs(5)).await;

    let stopped = Stopped(first);
    let status = Command::new("kill")
        .args(["-STOP", &first.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "could not stop the LISTEN backend");
    let started = Instant::now();
    // Pinged every 2 s, given up after 2 s without an answer, reconnected
    // after 0.5 s: a new session within about 4.5 s (a bound of twice
    // that, for a loaded machine; a listener never replaced never comes).
    let second = wait_for_listener(&db, &listener, first, Duration::from_secs(12)).await;
    let noticed = started.elapsed();
    eprintln!("a new LISTEN session {noticed:?} after the old one stopped answering");
    drop(stopped);
    db.execute(&format!("SELECT pg_terminate_backend({first})"))
        .await;
    runtime.shutdown().await;
    assert_ne!(second, first);
    assert!(
        noticed < Duration::from_secs(9),
        "a new LISTEN session after {noticed:?}"
    );
}

/// Waits for a LISTEN session other than `not`, and returns its pid.
async fn wait_for_listener(db: &TestDb, query: &str, not: i64, within: Duration) -> i64 {
    let started = Instant::now();
    loop {
        let pid = db.count(&format!("{query} AND pid <> {not}")).await;
        if pid != 0 {
            return pid;
        }
        assert!(
            started.elapsed() < within,
            "no new LISTEN session within {within:?}"
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
}
