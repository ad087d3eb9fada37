//! The send policy end to end: a receiver on loopback is reached only when
//! allowlisted; a destination that slipped past the check when it was
//! added (a name whose answer changed, a row written directly) fails with
//! `blocked_address` when connecting, and the receiver hears nothing; the
//! API refuses such destinations by the field `url`.

use std::time::Duration;

use remit::domain::{AttemptOutcome, Region, TaskState};
use remit::store::Store;
use serde_json::{json, Value};

use crate::support::{self, Receiver, TestDb, API_TOKEN};

/// The test configuration without the loopback allowlist.
fn strict(db: &TestDb) -> remit_actors::config::Config {
    let mut config = support::config(db, Region::US, "us-1");
    config.send.allow_hosts.clear();
    config
}

/// Sends one task to `url` under `config` and waits for it to end in
/// `state`; returns the task's failure reason and the attempt's transport
/// error.
async fn send_one(
    db: &TestDb,
    config: remit_actors::config::Config,
    url: &str,
    state: TaskState,
) -> (Option<String>, Option<String>) {
    // Through the store: the check at add time is not what is tested here.
    let dest = support::destination(db, "clinic-hooks", Region::US, url, None).await;
    let id = support::task(db, "r1", &dest, Region::US).await;
    let runtime = support::start(config, &db.store).await;
    support::wait_for_state(db, &[id], state, Duration::from_secs(10)).await;
    runtime.shutdown().await;
    let task = db.store.task(id).await.unwrap().unwrap();
    let attempts = db.store.attempts(id).await.unwrap();
    assert_eq!(attempts.len(), 1, "one attempt, never retried");
    let outcome = match state {
        TaskState::Delivered => AttemptOutcome::Delivered,
        _ => AttemptOutcome::Failed,
    };
    assert_eq!(attempts[0].outcome, outcome);
    (
        task.failure_reason,
        attempts[0].observed.transport_error.clone(),
    )
}

#[actix_rt::test]
async fn an_allowlisted_loopback_receiver_is_reached() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let mut config = strict(&db);
    // Listing the address also opens plain http to it.
    config.send.allow_hosts = vec!["127.0.0.1".into()];
    let (reason, error) = send_one(&db, config, &receiver.url("/hook"), TaskState::Delivered).await;
    assert_eq!((reason, error), (None, None));
    assert_eq!(receiver.requests_to("/hook").len(), 1);
}

#[actix_rt::test]
async fn a_loopback_address_is_refused_when_not_allowlisted() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let mut config = strict(&db);
    // Plain http allowed, so it is the address that is refused.
    config.send.allow_plain_http = true;
    let (reason, error) = send_one(&db, config, &receiver.url("/hook"), TaskState::Failed).await;
    assert_eq!(reason.as_deref(), Some("blocked_address"));
    assert_eq!(error.as_deref(), Some("blocked_address"));
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
    let (reason, error) = send_one(&db, config, &url, TaskState::Failed).await;
    assert_eq!(reason.as_deref(), Some("blocked_address"));
    assert_eq!(error.as_deref(), Some("blocked_address"));
    assert!(receiver.requests().is_empty(), "nothing reached loopback");
}

#[actix_rt::test]
async fn an_allowlisted_name_is_reached_through_the_resolver() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let url = receiver.url("/hook").replace("127.0.0.1", "localhost");
    let mut config = strict(&db);
    config.send.allow_hosts = vec!["localhost".into()];
    let (reason, _) = send_one(&db, config, &url, TaskState::Delivered).await;
    assert_eq!(reason, None);
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
    let (reason, error) = send_one(&db, config, &url, TaskState::Failed).await;
    assert_eq!(reason.as_deref(), Some("blocked_address"));
    assert_eq!(error.as_deref(), Some("blocked_address"));
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
