//! Operational events that reach a person, end to end on both stores: a
//! runtime with an events receiver on 127.0.0.1 sends `task.failed`,
//! `reminder.late` (for a slow receiver, never for a prompt one),
//! `reminder.horizon_ending`, `destination.failing` and
//! `destination.recovered`, each signed as the public Standard Webhooks
//! library verifies it; and a storm of failures for one destination, with
//! two processes of the region checking, arrives as a handful of events
//! whose counts add up to the storm exactly.

use remit::store::{Destinations, Schedule};
use std::time::Duration;

use remit::domain::{DestinationId, DisableOverrides, NewDestination, NewTask, Payload, Region};
use serde_json::Value;

use crate::support::standard_webhooks::verify;
use crate::support::{self, Backend, Received, Receiver, Reply, TestDb};

fn body(r: &Received) -> Value {
    serde_json::from_slice(&r.body).unwrap_or(Value::Null)
}

/// The events of `kind` in `log` the receiver answered, with their bodies.
fn of_kind(log: &[Received], kind: &str) -> Vec<(Received, Value)> {
    log.iter()
        .filter(|r| r.path == "/events" && r.status == 200)
        .map(|r| (r.clone(), body(r)))
        .filter(|(_, b)| b["type"] == kind)
        .collect()
}

fn about(events: &[(Received, Value)], destination: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|(_, b)| b["data"]["destination_id"] == destination)
        .map(|(_, b)| b.clone())
        .collect()
}

async fn registered(db: &TestDb, id: &str, url: &str, overrides: Option<DisableOverrides>) {
    let mut new =
        NewDestination::new(DestinationId::new(id).unwrap(), Region::EU, url, None).unwrap();
    if let Some(o) = overrides {
        new = new.with_overrides(o);
    }
    db.store.add_destination(new).await.unwrap();
}

fn events_config(db: &TestDb, events: &Receiver, secret: &str) -> remit_actors::config::Config {
    let mut config = support::config(db, Region::EU, "eu-1");
    config.events.url = Some(events.url("/events"));
    config.events.secret = Some(secret.to_owned());
    config.events.poll_ms = 50;
    config.events.check_interval_ms = 100;
    config.send.timeout_ms = 5_000;
    config.retry.backoff_base_ms = 200;
    config
}

#[actix_rt::test]
async fn every_kind_of_event_reaches_the_events_receiver_signed() {
    every_kind(Backend::Postgres).await;
}

#[actix_rt::test]
async fn every_kind_of_event_reaches_the_events_receiver_signed_on_sqlite() {
    every_kind(Backend::Sqlite).await;
}

async fn every_kind(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let events = Receiver::start();
    events.script("/events", vec![], Reply::ok());
    let receiver = Receiver::start();
    receiver.script("/gone", vec![], Reply::status(410));
    // Slow enough that an alert check (every 100 ms here) finds its task
    // live and late even on a loaded machine.
    receiver.script("/slow", vec![], Reply::ok().delayed(Duration::from_secs(8)));
    receiver.script("/prompt", vec![], Reply::ok());
    receiver.script("/down", vec![], Reply::status(503));
    receiver.script("/flaky", vec![], Reply::ok());
    let secret = remit_actors::signature::generate_secret();

    registered(&db, "gone", &receiver.url("/gone"), None).await;
    registered(&db, "slow", &receiver.url("/slow"), None).await;
    registered(&db, "prompt", &receiver.url("/prompt"), None).await;
    registered(&db, "down", &receiver.url("/down"), None).await;
    let twenty = DisableOverrides::new(Some(0), Some(20)).unwrap();
    registered(&db, "flaky", &receiver.url("/flaky"), Some(twenty)).await;
    // Fifteen failures of the twenty that disable it: at 75 %, past the
    // first level (50 %) and short of the second (90 %).
    let streak = match backend {
        Backend::Postgres => "UPDATE destinations SET failure_streak = 15, \
             failure_streak_since = now() - interval '1 minute', last_error = 'status 500' \
             WHERE id = 'flaky'"
            .to_owned(),
        Backend::Sqlite => format!(
            "UPDATE destinations SET failure_streak = 15, failure_streak_since = {}, \
             last_error = 'status 500' WHERE id = 'flaky'",
            (chrono::Utc::now() - chrono::Duration::minutes(1)).timestamp_micros()
        ),
    };
    assert_eq!(db.execute(&streak).await, 1);

    let at = |id: &str| DestinationId::new(id).unwrap();
    let now = chrono::Utc::now();
    support::task(&db, "gone-1", &at("gone"), Region::EU).await;
    support::task(&db, "slow-1", &at("slow"), Region::EU).await;
    support::task(&db, "prompt-1", &at("prompt"), Region::EU).await;
    // Due almost an hour ago, with an hour to retry: its horizon ends in
    // half a minute, and its receiver keeps answering 503.
    let ending = NewTask {
        traceparent: None,
        tenant_id: remit::domain::TenantId::new("clinic-1").unwrap(),
        reminder_id: remit::domain::ReminderId::new("down-1").unwrap(),
        destination_id: at("down"),
        region: Region::EU,
        not_before: now - chrono::Duration::minutes(59) - chrono::Duration::seconds(30),
        retry_horizon: chrono::Duration::hours(1),
        payload: Payload::json(r#"{"reminder":"down-1"}"#.to_owned()),
        ordering_key: None,
    };
    db.store.schedule(ending).await.unwrap();

    let mut config = events_config(&db, &events, &secret);
    config.events.late_after_seconds = 1;
    let runtime = support::start(config, &db.store).await;

    let wait = |kind: &'static str, destination: &'static str| {
        let events = &events;
        async move {
            events
                .wait_until(
                    Duration::from_secs(30),
                    &format!("{kind} of {destination}"),
                    |log| !about(&of_kind(log, kind), destination).is_empty(),
                )
                .await;
        }
    };
    wait("destination.failing", "flaky").await;
    // Now a delivery ends the streak.
    support::task(&db, "flaky-1", &at("flaky"), Region::EU).await;
    wait("destination.recovered", "flaky").await;
    wait("task.failed", "gone").await;
    wait("reminder.late", "slow").await;
    wait("reminder.horizon_ending", "down").await;
    runtime.shutdown().await;
    let log = events.requests();

    // Every event, verified by the public library, each with its own id.
    let all: Vec<Received> = events
        .requests_to("/events")
        .into_iter()
        .filter(|r| r.status == 200)
        .collect();
    let cases: Vec<(&str, &Received)> = all.iter().map(|r| (secret.as_str(), r)).collect();
    for (r, verdict) in all.iter().zip(verify(&cases)) {
        assert_eq!(verdict, Ok(()), "{}", String::from_utf8_lossy(&r.body));
    }
    let mut ids: Vec<&str> = all.iter().filter_map(|r| r.header("webhook-id")).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "one webhook-id per event");

    let failing = about(&of_kind(&log, "destination.failing"), "flaky");
    assert_eq!(failing.len(), 1, "{failing:?}");
    let d = &failing[0]["data"];
    assert_eq!(d["percent"], 50);
    assert_eq!(d["failure_streak"], 15);
    assert_eq!(d["disable_after_failures"], 20);
    assert_eq!(d["last_error"], "status 500");
    let recovered = about(&of_kind(&log, "destination.recovered"), "flaky");
    assert_eq!(recovered.len(), 1);
    assert_eq!(recovered[0]["data"]["failing_since"], d["failing_since"]);

    let failed = about(&of_kind(&log, "task.failed"), "gone");
    assert_eq!(failed[0]["data"]["count"], 1);
    let sample = &failed[0]["data"]["sample"][0];
    assert_eq!(sample["reminder_id"], "gone-1");
    assert_eq!(sample["tenant_id"], "clinic-1");
    assert_eq!(sample["reason"], "http_410");
    assert_eq!(failed[0]["data"]["reasons"]["http_410"], 1);
    for r in &all {
        let text = String::from_utf8_lossy(&r.body);
        assert!(!text.contains(r#""reminder":"#), "never a payload: {text}");
    }

    let late = of_kind(&log, "reminder.late");
    let slow = about(&late, "slow");
    assert_eq!(slow[0]["data"]["sample"][0]["reminder_id"], "slow-1");
    assert!(
        about(&late, "prompt").is_empty(),
        "a prompt delivery is not late: {late:?}"
    );
    let ending_events = about(&of_kind(&log, "reminder.horizon_ending"), "down");
    assert_eq!(
        ending_events[0]["data"]["sample"][0]["reminder_id"],
        "down-1"
    );
}

#[actix_rt::test]
async fn a_storm_of_failures_is_coalesced_into_a_handful_of_events() {
    storm(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_storm_of_failures_is_coalesced_into_a_handful_of_events_on_sqlite() {
    storm(Backend::Sqlite).await;
}

async fn storm(backend: Backend) {
    const TASKS: u64 = 200;
    let db = TestDb::running_on(backend).await;
    let events = Receiver::start();
    events.script("/events", vec![], Reply::ok());
    let receiver = Receiver::start();
    receiver.script("/gone", vec![], Reply::status(410));
    let secret = remit_actors::signature::generate_secret();
    registered(&db, "gone", &receiver.url("/gone"), None).await;
    // Two processes of the region, each running the alert check.
    let mut runtimes = Vec::new();
    for owner in ["eu-1", "eu-2"] {
        let mut config = events_config(&db, &events, &secret);
        config.lease_owner = Some(owner.into());
        config.events.window_seconds = 2;
        runtimes.push(support::start(config, &db.store).await);
    }
    let gone = DestinationId::new("gone").unwrap();
    let started = std::time::Instant::now();
    for i in 0..TASKS {
        support::task(&db, &format!("storm-{i}"), &gone, Region::EU).await;
    }
    let counted = |log: &[Received]| -> u64 {
        of_kind(log, "task.failed")
            .iter()
            .map(|(_, b)| b["data"]["count"].as_u64().unwrap())
            .sum()
    };
    events
        .wait_until(Duration::from_secs(60), "every failure counted", |log| {
            counted(log) >= TASKS
        })
        .await;
    let took = started.elapsed();
    for runtime in runtimes {
        runtime.shutdown().await;
    }
    let log = events.requests();
    let failed = of_kind(&log, "task.failed");
    assert_eq!(
        counted(&log),
        TASKS,
        "each failure counted once, by one of the two processes"
    );
    // One event a window at most (2 s; the spacing is checked below): a
    // handful for a storm a loaded machine drains in a few seconds, never
    // one a failure.
    let windows = took.as_secs() / 2 + 1;
    assert!(
        failed.len() as u64 <= windows.max(6),
        "{} events for one storm over {took:?}: {:?}",
        failed.len(),
        failed
            .iter()
            .map(|(_, b)| &b["data"]["count"])
            .collect::<Vec<_>>()
    );
    for (r, b) in &failed {
        assert!(b["data"]["sample"].as_array().unwrap().len() <= 10);
        assert_eq!(b["data"]["window_seconds"], 2);
        assert_eq!(verify(&[(&secret, r)]), vec![Ok(())]);
    }
    // At least a window apart.
    let mut times: Vec<chrono::DateTime<chrono::Utc>> = failed
        .iter()
        .map(|(_, b)| b["timestamp"].as_str().unwrap().parse().unwrap())
        .collect();
    times.sort();
    for pair in times.windows(2) {
        assert!(
            pair[1] - pair[0] >= chrono::Duration::seconds(2),
            "{times:?}"
        );
    }
}
