//! A destination's stats by the hour through the API, on both stores:
//! receivers on 127.0.0.1:0 answer a known mix (2xx, 5xx, 404, 429, an
//! answer slower than the send timeout, connections closed unanswered),
//! and `GET /v1/destinations/{id}/stats` counts each class exactly; its
//! refusals name their field, and another region's destination is not
//! found.

use remit::store::Destinations;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use remit::domain::{NewDestination, Region};
use serde_json::{json, Value};

use super::client::Api;
use crate::support::{self, Backend, Receiver, Reply, TestDb};

#[actix_rt::test]
async fn stats_count_a_known_mix_of_answers_on_postgres() {
    stats_count_a_known_mix_of_answers(Backend::Postgres).await;
}

#[actix_rt::test]
async fn stats_count_a_known_mix_of_answers_on_sqlite() {
    stats_count_a_known_mix_of_answers(Backend::Sqlite).await;
}

/// A port whose connections are accepted and closed at once, unanswered.
fn closing_listener() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            drop(stream);
        }
    });
    format!("http://{addr}/gone")
}

/// The destination's stats once `attempts` have ended, polled with a
/// deadline.
async fn stats_after(api: &Api, id: &str, attempts: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, stats) = api.get(&format!("/v1/destinations/{id}/stats")).await;
        assert_eq!(status, 200, "{stats}");
        let hours = stats["hours"].as_array().unwrap();
        let seen: u64 = hours.iter().map(|h| h["attempts"].as_u64().unwrap()).sum();
        if seen >= attempts {
            assert_eq!(seen, attempts, "{stats}");
            return stats;
        }
        assert!(
            Instant::now() < deadline,
            "{id}: {seen} of {attempts}: {stats}"
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The one hour of `stats`' (a test's attempts all end within a minute;
/// at the turn of an hour there may be two, which are added up here).
fn only_hour(stats: &Value) -> Value {
    let hours = stats["hours"].as_array().unwrap();
    assert!((1..=2).contains(&hours.len()), "{stats}");
    let sum = |f: &dyn Fn(&Value) -> &Value| -> u64 {
        hours.iter().map(|h| f(h).as_u64().unwrap()).sum()
    };
    json!({
        "attempts": sum(&|h| &h["attempts"]),
        "succeeded": sum(&|h| &h["succeeded"]),
        "failed": sum(&|h| &h["failed"]),
        "failures": {
            "transport": sum(&|h| &h["failures"]["transport"]),
            "timeout": sum(&|h| &h["failures"]["timeout"]),
            "client_error": sum(&|h| &h["failures"]["client_error"]),
            "rate_limited": sum(&|h| &h["failures"]["rate_limited"]),
            "server_error": sum(&|h| &h["failures"]["server_error"]),
            "other_status": sum(&|h| &h["failures"]["other_status"]),
        },
    })
}

async fn stats_count_a_known_mix_of_answers(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    let slow = Reply::ok().delayed(Duration::from_secs(3));
    receiver.script(
        "/mixed",
        vec![
            Reply::ok(),
            Reply::status(204),
            Reply::ok(),
            Reply::status(500),
            Reply::status(502),
            Reply::status(404),
            slow,
        ],
        Reply::ok(),
    );
    receiver.script("/limited", vec![Reply::status(429)], Reply::ok());
    let mut config = support::config(&db, Region::EU, "eu-1");
    // One attempt each, so every count is known; and a send timeout the
    // slow answer runs past.
    config.retry.max_attempts = 1;
    config.send.timeout_ms = 1_000;
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    let destinations = [
        ("mixed", receiver.url("/mixed"), 7),
        ("limited", receiver.url("/limited"), 1),
        ("closed", closing_listener(), 2),
    ];
    for (id, url, tasks) in &destinations {
        let (status, answer) = api
            .post(
                "/v1/destinations",
                json!({"id": id, "region": "eu", "url": url}),
            )
            .await;
        assert_eq!(status, 201, "{answer}");
        for n in 0..*tasks {
            let (status, task) = api
                .post(
                    "/v1/tasks",
                    json!({
                        "tenant_id": "clinic-1", "reminder_id": format!("{id}-{n}"),
                        "destination_id": id, "region": "eu",
                        "not_before": chrono::Utc::now().to_rfc3339(),
                        "payload": {"n": n},
                    }),
                )
                .await;
            assert_eq!(status, 201, "{task}");
        }
    }

    let mixed = stats_after(&api, "mixed", 7).await;
    assert_eq!(mixed["destination_id"], "mixed");
    assert_eq!(
        only_hour(&mixed),
        json!({
            "attempts": 7, "succeeded": 3, "failed": 4,
            "failures": {"transport": 0, "timeout": 1, "client_error": 1, "rate_limited": 0,
                         "server_error": 2, "other_status": 0},
        }),
        "{mixed}"
    );
    // The slowest attempt ran into the 1 s send timeout: the 99th
    // percentile of seven is the slowest, read as its bucket's upper
    // bound (at most 41% above it).
    // At the turn of an hour the slow one may stand in an hour of its own:
    // the 99th percentile is read where it is highest, the median where
    // most attempts are.
    let hours = mixed["hours"].as_array().unwrap();
    let percentile = |h: &Value, p: &str| h["latency_ms"][p].as_f64().unwrap();
    let slowest = hours
        .iter()
        .max_by(|a, b| percentile(a, "p99").total_cmp(&percentile(b, "p99")))
        .unwrap();
    let busiest = hours
        .iter()
        .max_by_key(|h| h["attempts"].as_u64().unwrap())
        .unwrap();
    let p99 = percentile(slowest, "p99");
    assert!((1_000.0..=2_000.0).contains(&p99), "{mixed}");
    assert!(percentile(busiest, "p50") < 1_000.0, "{mixed}");
    let hour = busiest;
    assert!(hour["lateness_ms"]["p99"].as_f64().is_some(), "{hour}");

    let limited = stats_after(&api, "limited", 1).await;
    assert_eq!(
        only_hour(&limited)["failures"]["rate_limited"],
        1,
        "{limited}"
    );
    let closed = stats_after(&api, "closed", 2).await;
    assert_eq!(
        only_hour(&closed),
        json!({
            "attempts": 2, "succeeded": 0, "failed": 2,
            "failures": {"transport": 2, "timeout": 0, "client_error": 0, "rate_limited": 0,
                         "server_error": 0, "other_status": 0},
        }),
        "{closed}"
    );

    // A window in the past holds none of it.
    let (status, past) = api
        .get("/v1/destinations/mixed/stats?since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z")
        .await;
    assert_eq!(status, 200, "{past}");
    assert_eq!(past["hours"], json!([]));
    assert_eq!(past["since"], "2026-01-01T00:00:00Z");

    // Refusals name their field; an unknown parameter is a 400.
    for (query, field) in [
        ("hours=0", "hours"),
        ("hours=745", "hours"),
        ("hours=2&since=2026-01-01T00:00:00Z", "hours"),
        ("since=yesterday", "since"),
        ("until=2026-01-01T00:00:00Z", "since"),
        (
            "since=2026-01-01T00:00:00Z&until=2026-03-01T00:00:00Z",
            "since",
        ),
        ("since=2026-01-01T00:00:00Z&until=later", "until"),
    ] {
        let (status, answer) = api
            .get(&format!("/v1/destinations/mixed/stats?{query}"))
            .await;
        assert_eq!(status, 422, "{query}: {answer}");
        assert_eq!(answer["error"]["field"], field, "{query}: {answer}");
    }
    let (status, answer) = api.get("/v1/destinations/mixed/stats?days=2").await;
    assert_eq!(status, 400, "{answer}");

    // Another region's destination is answered like a missing one.
    let us = NewDestination::new(
        remit::domain::DestinationId::new("us-crm").unwrap(),
        Region::US,
        &receiver.url("/us"),
        None,
    )
    .unwrap();
    db.store.add_destination(us).await.unwrap();
    for id in ["us-crm", "nobody"] {
        let (status, answer) = api.get(&format!("/v1/destinations/{id}/stats")).await;
        assert_eq!(status, 404, "{id}: {answer}");
    }
    runtime.shutdown().await;
}
