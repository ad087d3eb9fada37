//! Tokens made, listed and revoked through the API, and a token lookup
//! the database cannot answer.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::client::Api;
use super::scopes::{grant, stored};
use crate::support::{self, Backend, TestDb, API_TOKEN};
use remit::domain::Region;

#[actix_rt::test]
async fn tokens_made_through_the_api_work_until_revoked() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);

    let (status, made) = api
        .post(
            "/v1/tokens",
            json!({"scope": "read", "name": "dashboard", "expires_at": "2999-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().unwrap().to_owned();
    let id = made["id"].as_str().unwrap().to_owned();
    assert!(token.starts_with("remit_"), "{made}");
    assert_eq!(made["scope"], "read");
    assert_eq!(made["tenants"], Value::Null);
    assert_eq!(made["revoked_at"], Value::Null);
    assert_eq!(made["expires_at"], "2999-01-01T00:00:00Z");

    // It reads, and may not do more.
    let probe = |token: String| {
        let api = &api;
        async move {
            api.call("GET", "/v1/destinations/none", Some(&token), None)
                .await
                .0
        }
    };
    assert_eq!(probe(token.clone()).await, 404);
    let (status, _) = api.call("GET", "/v1/tokens", Some(&token), None).await;
    assert_eq!(status, 403);

    // The list never shows a secret.
    let (status, list) = api.get("/v1/tokens").await;
    assert_eq!(status, 200);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["id"], id.as_str());
    assert!(!list.to_string().contains(&token), "{list}");
    assert!(list[0].get("token").is_none());

    // Bad requests name the field.
    for (body, field) in [
        (json!({"scope": "root"}), "scope"),
        (json!({"scope": "admin", "tenants": ["a"]}), "tenants"),
        (
            json!({"scope": "read", "expires_at": "2000-01-01T00:00:00Z"}),
            "expires_at",
        ),
        (
            json!({"scope": "read", "expires_at": "tomorrow"}),
            "expires_at",
        ),
    ] {
        let (status, answer) = api.post("/v1/tokens", body).await;
        assert_eq!(
            (status, &answer["error"]["field"]),
            (422, &json!(field)),
            "{answer}"
        );
    }

    // Revoked: refused on the very next request; revoking again keeps the
    // first revocation.
    let (status, revoked) = api
        .call("DELETE", &format!("/v1/tokens/{id}"), Some(API_TOKEN), None)
        .await;
    assert_eq!(status, 200, "{revoked}");
    assert!(revoked["revoked_at"].is_string(), "{revoked}");
    assert_eq!(probe(token.clone()).await, 401);
    let (_, again) = api
        .call("DELETE", &format!("/v1/tokens/{id}"), Some(API_TOKEN), None)
        .await;
    assert_eq!(again, revoked);
    for unknown in ["tok_0000000000000000", "nope"] {
        let (status, _) = api
            .call(
                "DELETE",
                &format!("/v1/tokens/{unknown}"),
                Some(API_TOKEN),
                None,
            )
            .await;
        assert_eq!(status, 404, "{unknown}");
    }
    runtime.shutdown().await;
}

/// A logger whose lines the test reads.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[actix_rt::test]
async fn a_token_that_cannot_be_looked_up_answers_503_on_postgres() {
    a_token_that_cannot_be_looked_up_answers_503(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_token_that_cannot_be_looked_up_answers_503_on_sqlite() {
    a_token_that_cannot_be_looked_up_answers_503(Backend::Sqlite).await;
}

async fn a_token_that_cannot_be_looked_up_answers_503(backend: Backend) {
    use slog::Drain;

    let db = TestDb::running_on(backend).await;
    let (_, token) = stored(&db, grant("admin", &[])).await;
    let lines = Lines::default();
    let drain = slog_json::Json::default(lines.clone()).fuse();
    let log = slog::Logger::root(Mutex::new(drain).fuse(), slog::o!());
    remit_actors::app::install_crypto_provider();
    let runtime = remit_actors::app::Runtime::start_with_clock(
        support::config(&db, Region::EU, "eu-1"),
        db.store.clone(),
        log,
        remit_actors::runtime::WallClock::default(),
    )
    .await
    .unwrap();
    let api = Api::new(&runtime);
    let probe = "/v1/destinations/none";
    assert_eq!(api.call("GET", probe, Some(&token), None).await.0, 404);

    // The table is gone: the lookup fails, which is not a wrong token.
    db.execute("ALTER TABLE api_tokens RENAME TO api_tokens_away")
        .await;
    let (status, answer) = api.call("GET", probe, Some(&token), None).await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["error"]["code"], "unavailable");
    // The bootstrap token needs no lookup; a token remit could not have
    // made is refused without one.
    assert_eq!(api.call("GET", probe, Some(API_TOKEN), None).await.0, 404);
    assert_eq!(api.call("GET", probe, Some("other"), None).await.0, 401);

    let logged = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let failure = logged
        .lines()
        .find(|line| line.contains("\"status\":503"))
        .unwrap_or_else(|| panic!("no 503 logged in {logged}"));
    assert!(
        failure.contains("api_tokens"),
        "the cause is logged: {failure}"
    );
    assert!(
        !logged.contains(&token),
        "the token is never logged: {logged}"
    );
    assert!(!logged.contains(&token["remit_".len()..]), "{logged}");
    runtime.shutdown().await;
}
