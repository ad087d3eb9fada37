//! The send policy end to end: a receiver on loopback is reached only when
//! allowlisted; a destination the policy refuses (a name whose answer
//! changed, a row written directly, a restart without the allowlist entry
//! it needs) is held: its tasks go back unsent and unfailed, the receiver
//! hears nothing, the destination's row says why (`remit status`) and
//! `/metrics` counts it; the API refuses such destinations by the field
//! `url`.

use remit::store::{Destinations, Reports, Schedule};
use std::time::{Duration, Instant};

use remit::domain::{AttemptOutcome, Region, TaskState};
use serde_json::{json, Value};

use crate::support::{self, Receiver, TestDb, API_TOKEN};

/// The test configuration without the loopback allowlist.
fn strict(db: &TestDb) -> remit_actors::config::Config {
    let mut config = support::config(db, Region::US, "us-1");
    config.send.allow_hosts.clear();
    config
}

/// Sends one task to `url` under `config` and waits for it to be
/// delivered.
async fn delivered(db: &TestDb, config: remit_actors::config::Config, url: &str) {
    // Through the store: the check at add time is not what is tested here.
    let dest = support::destination(db, "clinic-hooks", Region::US, url, None).await;
    let id = support::task(db, "r1", &dest, Region::US).await;
    let runtime = support::start(config, &db.store).await;
    support::wait_for_state(db, &[id], TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;
    let attempts = db.store.attempts(id).await.unwrap();
    assert_eq!(attempts.len(), 1, "one attempt, never retried");
    assert_eq!(attempts[0].outcome, AttemptOutcome::Delivered);
}

/// Runs one task to `url` under a policy that refuses it until the
/// destination is recorded as refused; returns why. The task is held:
/// back in `pending`, unsent, not failed, due again in about a minute.
async fn held(db: &TestDb, config: remit_actors::config::Config, url: &str) -> String {
    let dest = support::destination(db, "clinic-hooks", Region::US, url, None).await;
    let id = support::task(db, "r1", &dest, Region::US).await;
    let runtime = support::start(config, &db.store).await;
    let started = Instant::now();
    let why = loop {
        let report = db.store.status(None).await.unwrap();
        if let Some(refused) = report.refused.iter().find(|r| r.destination == dest) {
            break refused.why.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never recorded as refused"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Handed back before it was recorded: the hand-back comes first.
    let series = runtime.stats().metrics.encode();
    assert!(
        series
            .contains(r#"remit_address_refusals_total{region="us",destination="clinic-hooks"} 1"#),
        "{series}"
    );
    runtime.shutdown().await;
    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(task.state, TaskState::Pending, "held, not failed");
    assert_eq!(task.failure_reason, None);
    assert_eq!(task.attempt_count, 0, "the hand-back is not an attempt");
    assert!(
        task.available_at > chrono::Utc::now() + chrono::Duration::seconds(30),
        "due again only after the hold"
    );
    why
}

#[actix_rt::test]
async fn an_allowlisted_loopback_receiver_is_reached() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let mut config = strict(&db);
    // Listing the address also opens plain http to it.
    config.send.allow_hosts = vec!["127.0.0.1".into()];
    delivered(&db, config, &receiver.url("/hook")).await;
    assert_eq!(receiver.requests_to("/hook").len(), 1);
}

#[actix_rt::test]
async fn a_loopback_address_is_refused_when_not_allowlisted() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let mut config = strict(&db);
    // Plain http allowed, so it is the address that is refused.
    config.send.allow_plain_http = true;
    let why = held(&db, config, &receiver.url("/hook")).await;
    assert!(
        why.contains("127.0.0.1 is") && why.contains("send.allow_hosts"),
        "{why}"
    );
    assert!(receiver.requests().is_empty(), "nothing reached loopback");
}

/// `localhost` passes every check a URL alone allows; only the resolver
/// sees that it leads to 127.0.0.1.
#[actix_rt::test]
async fn a_name_resolving_to_a_refused_address_is_refused_when_connecting() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let url = receiver.url("/hook").replace("127.0.0.1", "localhost");
    let mut config = strict(&db);
    config.send.allow_plain_http = true;
    let why = held(&db, config, &url).await;
    assert!(why.contains("resolves only to addresses"), "{why}");
    assert!(receiver.requests().is_empty(), "nothing reached loopback");
}

#[actix_rt::test]
async fn an_allowlisted_name_is_reached_through_the_resolver() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let url = receiver.url("/hook").replace("127.0.0.1", "localhost");
    let mut config = strict(&db);
    config.send.allow_hosts = vec!["localhost".into()];
    delivered(&db, config, &url).await;
    assert_eq!(receiver.requests_to("/hook").len(), 1);
}

#[actix_rt::test]
async fn plain_http_is_refused_without_the_flag() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let mut config = strict(&db);
    // The network is open, the scheme is not: a CIDR opens addresses, and
    // a name reached through it is not listed by name.
    config.send.allow_hosts = vec!["127.0.0.0/8".into()];
    let url = receiver.url("/hook").replace("127.0.0.1", "localhost");
    let why = held(&db, config, &url).await;
    assert!(why.contains("http"), "{why}");
    assert!(receiver.requests().is_empty());
}

async fn add_destination(api: &str, id: &str, url: &str) -> (u16, Value) {
    let mut response = awc::Client::default()
        .post(format!("http://{api}/v1/destinations"))
        .insert_header(("authorization", format!("Bearer {API_TOKEN}")))
        .send_json(&json!({"id": id, "region": "us", "url": url}))
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = response.body().await.unwrap();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

#[actix_rt::test]
async fn the_api_refuses_such_destinations_by_the_field_url() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let runtime = support::start(strict(&db), &db.store).await;
    let api = runtime.api_addr().to_string();
    let localhost = receiver.url("/hook").replace("127.0.0.1", "localhost");
    let cases = [
        (receiver.url("/hook"), "plain http"),
        ("https://127.0.0.1:5432/".to_owned(), "loopback"),
        (
            "https://169.254.169.254/latest/meta-data/".to_owned(),
            "cloud metadata",
        ),
        ("https://[::ffff:10.0.0.1]/".to_owned(), "IPv4-mapped"),
        (localhost.replace("http:", "https:"), "resolves only to"),
        ("http://hooks.example.com/in".to_owned(), "plain http"),
    ];
    for (i, (url, why)) in cases.iter().enumerate() {
        let (status, body) = add_destination(&api, &format!("d{i}"), url).await;
        assert_eq!(status, 422, "{url}: {body}");
        assert_eq!(body["error"]["field"], "url", "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        // The message names the URL as remit stores it (normalised).
        let named = url::Url::parse(url).unwrap().to_string();
        assert!(
            message.contains(why) && message.contains(&named),
            "{url}: {message}"
        );
        let id = remit::domain::DestinationId::new(&format!("d{i}")).unwrap();
        assert!(db.store.destination(&id).await.unwrap().is_none());
    }
    let (status, body) = add_destination(&api, "public", "https://hooks.example.com/in").await;
    assert_eq!(status, 201, "{body}");
    runtime.shutdown().await;
}
