//! A destination that answers 500 to everything disables itself after the
//! configured streak; its other tasks wait unsent; the operator sees why
//! through the API and `remit status`, enables it once the receiver
//! recovers, and the waiting tasks go out. A 429 with Retry-After never
//! counts toward disabling.

use remit::store::{Database, Destinations, Leases, Reports, Schedule};
use std::time::Duration;

use remit::domain::{Region, TaskId, TaskState};
use serde_json::{json, Value};

use super::client::Api;
use crate::support::{self, Backend, Receiver, Reply, RetryAfter, TestDb};

/// Waits until the destination's view says `enabled` is `enabled`.
async fn wait_enabled(api: &Api, id: &str, enabled: bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (status, view) = api.get(&format!("/v1/destinations/{id}")).await;
        assert_eq!(status, 200, "{view}");
        if view["enabled"] == json!(enabled) {
            return view;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "destination {id} not enabled={enabled}: {view}"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits for the events receiver's `kind` event and checks it: signed
/// with the events secret, the Standard Webhooks headers, the body.
async fn event(events: &Receiver, secret: &str, kind: &str) -> Value {
    let has = |r: &[crate::support::receiver::Received]| {
        r.iter().any(|r| {
            serde_json::from_slice::<Value>(&r.body).is_ok_and(|b| b["type"] == json!(kind))
        })
    };
    events
        .wait_until(Duration::from_secs(15), kind, |r| has(r))
        .await;
    let request = events
        .requests_to("/events")
        .into_iter()
        .find(|r| serde_json::from_slice::<Value>(&r.body).is_ok_and(|b| b["type"] == json!(kind)))
        .unwrap();
    let id = request.header("webhook-id").unwrap();
    let timestamp = request.header("webhook-timestamp").unwrap();
    let signature = request.header("webhook-signature").unwrap();
    assert!(crate::signatures::verify(
        secret,
        id,
        timestamp,
        &request.body,
        signature
    ));
    serde_json::from_slice(&request.body).unwrap()
}

async fn states(store: &Database, tasks: &[TaskId]) -> Vec<TaskState> {
    let mut out = Vec::new();
    for id in tasks {
        out.push(store.task(*id).await.unwrap().unwrap().state);
    }
    out
}

async fn disables_and_comes_back(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![], Reply::status(500));
    let events = Receiver::start();
    events.script("/events", vec![], Reply::ok());
    let secret = remit_actors::signature::generate_secret();
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.retry.backoff_base_ms = 10;
    config.destinations.disable_after_seconds = 0;
    config.destinations.disable_after_failures = 3;
    config.events.url = Some(events.url("/events"));
    config.events.secret = Some(secret.clone());
    config.events.poll_ms = 50;
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    let (status, created) = api
        .post(
            "/v1/destinations",
            json!({"id": "crm", "region": "eu", "url": receiver.url("/hook")}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let crm = remit::domain::DestinationId::new("crm").unwrap();

    let first = support::task(&db, "r0", &crm, Region::EU).await;
    let view = wait_enabled(&api, "crm", false).await;
    let reason = view["disabled_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("auto: 3 failures in a row over "),
        "{view}"
    );
    assert!(view["disabled_at"].is_string(), "{view}");
    assert_eq!(view["last_error"], json!("status 500"), "{view}");
    let failed_requests = receiver.requests_to("/hook").len();
    let disabled = event(&events, &secret, "destination.disabled").await;
    assert_eq!(disabled["data"]["destination_id"], json!("crm"));
    assert_eq!(disabled["data"]["region"], json!("eu"));
    assert_eq!(disabled["data"]["reason"], json!(reason));
    assert_eq!(disabled["data"]["last_error"], json!("status 500"));
    assert_eq!(disabled["data"]["at"], view["disabled_at"]);
    assert!(failed_requests >= 3, "{failed_requests}");

    // Its other tasks wait, unsent and not failed.
    let mut waiting = vec![first];
    for i in 1..3 {
        waiting.push(support::task(&db, &format!("r{i}"), &crm, Region::EU).await);
    }
    // The claim every runtime makes finds nothing of them to lease.
    let probe = db
        .store
        .claim_due(&support::claim(Region::EU, "probe", 10))
        .await
        .unwrap();
    assert!(probe.is_empty(), "{probe:?}");
    assert_eq!(receiver.requests_to("/hook").len(), failed_requests);
    let report = db.store.status(Some(Region::EU)).await.unwrap();
    for state in states(&db.store, &waiting).await {
        assert!(
            matches!(state, TaskState::Pending | TaskState::RetryWait),
            "{state:?}"
        );
    }
    // What `remit status` shows.
    assert_eq!(report.disabled.len(), 1);
    let text = remit_actors::status::to_text(&report, "test");
    assert!(text.contains("Disabled destinations"), "{text}");
    assert!(text.contains(reason), "{text}");
    assert!(text.contains("status 500"), "{text}");
    let as_json = remit_actors::status::to_json(&report);
    assert_eq!(as_json["disabled"][0]["destination"], json!("crm"));
    assert_eq!(as_json["disabled"][0]["reason"], json!(reason));
    assert_eq!(as_json["disabled"][0]["last_error"], json!("status 500"));
    let series = runtime.stats().metrics.encode();
    assert!(
        series.contains(r#"remit_destinations_auto_disabled_total{region="eu"} 1"#),
        "{series}"
    );

    // The receiver recovers; the operator brings the destination back.
    receiver.script("/hook", vec![], Reply::ok());
    let (status, enabled) = api.post("/v1/destinations/crm/enable", json!({})).await;
    assert_eq!(status, 200, "{enabled}");
    assert_eq!(enabled["enabled"], json!(true));
    assert_eq!(enabled["disabled_reason"], Value::Null);
    assert_eq!(enabled["failure_streak"], json!(0));
    support::wait_for_state(&db, &waiting, TaskState::Delivered, Duration::from_secs(15)).await;
    let enabled = event(&events, &secret, "destination.enabled").await;
    assert_eq!(enabled["data"]["destination_id"], json!("crm"));
    assert_eq!(enabled["data"]["reason"], Value::Null);

    // Disabled by hand, with a reason, it holds new work again.
    let (status, off) = api
        .post(
            "/v1/destinations/crm/disable",
            json!({"reason": "receiver migrating"}),
        )
        .await;
    assert_eq!(status, 200, "{off}");
    assert_eq!(off["disabled_reason"], json!("receiver migrating"));
    let (status, refused) = api
        .post("/v1/destinations/crm/disable", json!({"reason": ""}))
        .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["field"], json!("reason"));
    let (status, _) = api.post("/v1/destinations/nobody/enable", json!({})).await;
    assert_eq!(status, 404);
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn a_failing_destination_disables_itself_and_comes_back_on_postgres() {
    disables_and_comes_back(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_failing_destination_disables_itself_and_comes_back_on_sqlite() {
    disables_and_comes_back(Backend::Sqlite).await;
}

/// A receiver pacing remit with 429 + Retry-After is not failing.
#[actix_rt::test]
async fn a_429_with_retry_after_never_counts() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script(
        "/hook",
        vec![
            Reply::status(429).retry_after(RetryAfter::Seconds(1)),
            Reply::status(429).retry_after(RetryAfter::Seconds(1)),
        ],
        Reply::ok(),
    );
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.destinations.disable_after_seconds = 0;
    config.destinations.disable_after_failures = 1;
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let task = support::task(&db, "r0", &dest, Region::EU).await;
    let runtime = support::start(config, &db.store).await;
    support::wait_for_state(&db, &[task], TaskState::Delivered, Duration::from_secs(15)).await;
    runtime.shutdown().await;
    assert_eq!(receiver.requests_to("/hook").len(), 3);
    let d = db.store.destination(&dest).await.unwrap().unwrap();
    assert!(d.enabled, "{d:?}");
    assert_eq!(d.health.failure_streak, 0);
    assert_eq!(d.health.disabled_reason, None);
}

/// A disabled destination's task fails once its horizon has passed,
/// rather than waiting forever; it is never sent.
#[actix_rt::test]
async fn a_disabled_destinations_task_fails_at_its_horizon() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    // Due two hours ago with a one-hour horizon: past it already.
    let due = chrono::Utc::now() - chrono::Duration::hours(2);
    let late = support::task_at(&db, "r0", &dest, Region::EU, due).await;
    db.store.disable_destination(&dest, None).await.unwrap();
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.metrics.queue_interval_seconds = 1;
    let runtime = support::start(config, &db.store).await;
    support::wait_for_state(&db, &[late], TaskState::Failed, Duration::from_secs(15)).await;
    // The gauge comes from the periodic queue read, which may not have run
    // yet when the task fails: wait for it rather than race it.
    let series = support::wait_for_series(
        &runtime,
        r#"remit_destinations_disabled{region="eu"} 1"#,
        Duration::from_secs(5),
    )
    .await;
    runtime.shutdown().await;
    let task = db.store.task(late).await.unwrap().unwrap();
    assert_eq!(task.failure_reason.as_deref(), Some("destination_disabled"));
    assert!(receiver.requests().is_empty());
    assert!(
        series.contains(
            r#"remit_terminal_failures_total{region="eu",reason="destination_disabled"} 1"#
        ),
        "{series}"
    );
}

/// An event whose webhook was scheduled but which was never forgotten (the
/// process died in between, or a second process turned it too) is turned
/// again as a repeat: the outbox drains and the receiver hears it once.
#[actix_rt::test]
async fn an_event_turned_twice_is_a_repeat_and_the_outbox_drains() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let events = Receiver::start();
    events.script("/events", vec![], Reply::ok());
    let secret = remit_actors::signature::generate_secret();
    let dest = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    db.store.disable_destination(&dest, None).await.unwrap();
    let outbox = "SELECT count(*) AS n FROM destination_events";
    let kept = "SELECT * FROM destination_events";
    db.execute(&format!("CREATE TABLE kept_event AS {kept}"))
        .await;

    let mut config = support::config(&db, Region::EU, "eu-1");
    config.events.url = Some(events.url("/events"));
    config.events.secret = Some(secret.clone());
    config.events.poll_ms = 50;
    let runtime = support::start(config, &db.store).await;
    event(&events, &secret, "destination.disabled").await;
    drained(&db, outbox).await;
    // As if the relay had died after scheduling and before forgetting.
    db.execute("INSERT INTO destination_events SELECT * FROM kept_event")
        .await;
    drained(&db, outbox).await;
    runtime.shutdown().await;
    let heard = events.requests_to("/events");
    assert_eq!(heard.len(), 1, "the event is delivered once");
}

/// Waits until `count` (a count of the outbox's rows) reads 0.
async fn drained(db: &TestDb, count: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while db.count(count).await != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the outbox did not drain"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}
