//! What the router answers outside the handlers: an unknown path is 404
//! and a wrong method 405, each with the JSON error body; the probe is
//! plain text; the bearer scheme is matched without regard to case.

use remit::domain::Region;
use serde_json::json;

use super::client::Api;
use crate::support::{self, TestDb, API_TOKEN};

#[actix_rt::test]
async fn unknown_routes_and_methods_answer_in_the_error_shape() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let client = &api.client;

    for path in ["/nowhere", "/v1/nowhere", "/v1/tasks/a/b/c", "/v2/tasks"] {
        let mut response = client
            .get(format!("{}{path}", api.base))
            .insert_header(("authorization", format!("Bearer {API_TOKEN}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{path}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_found", "{path}: {body}");
        assert_eq!(body["error"]["field"], json!(null));
    }
    let cases = [
        ("DELETE", "/v1/tasks", "GET, POST"),
        ("GET", "/v1/tasks/batch", "POST"),
        ("PUT", "/v1/destinations/crm", "GET, PATCH, DELETE"),
        (
            "GET",
            "/v1/tasks/00000000-0000-0000-0000-000000000000/replay",
            "POST",
        ),
        ("POST", "/healthz", "GET"),
        ("DELETE", "/metrics", "GET"),
    ];
    for (method, path, allow) in cases {
        let method = actix_web::http::Method::from_bytes(method.as_bytes()).unwrap();
        let mut response = client
            .request(method.clone(), format!("{}{path}", api.base))
            .insert_header(("authorization", format!("Bearer {API_TOKEN}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{method} {path}");
        assert_eq!(response.headers().get("allow").unwrap(), allow);
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "method_not_allowed", "{body}");
    }

    let mut response = client
        .get(format!("{}/healthz", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers().get("content-type").unwrap();
    assert!(
        content_type.to_str().unwrap().starts_with("text/plain"),
        "{content_type:?}"
    );
    assert_eq!(response.body().await.unwrap(), "ok");
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn the_bearer_scheme_is_matched_without_regard_to_case() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);

    let answer = |value: String| {
        let request = api
            .client
            .get(format!("{}/v1/destinations/crm", api.base))
            .insert_header(("authorization", value));
        async move { request.send().await.unwrap().status().as_u16() }
    };
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        // Known to the API, so 404 (no such destination), not 401.
        assert_eq!(
            answer(format!("{scheme} {API_TOKEN}")).await,
            404,
            "{scheme}"
        );
    }
    assert_eq!(answer(format!("Basic {API_TOKEN}")).await, 401);
    assert_eq!(answer(format!("Bearer {API_TOKEN}x")).await, 401);
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn metrics_bind_serves_metrics_and_probes_apart_from_the_api() {
    let db = TestDb::with_database_clock().await;
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.metrics.bind = Some("127.0.0.1:0".into());
    let runtime = support::start(config, &db.store).await;
    let api = Api::new(&runtime);
    let metrics = format!("http://{}", runtime.metrics_addr().unwrap());
    let status = |url: String| {
        let request = api.client.get(url);
        async move { request.send().await.unwrap().status().as_u16() }
    };

    assert_eq!(status(format!("{metrics}/metrics")).await, 200);
    assert_eq!(status(format!("{metrics}/healthz")).await, 200);
    assert_eq!(status(format!("{metrics}/readyz")).await, 200);
    assert_eq!(status(format!("{metrics}/v1/tasks/x")).await, 404);
    assert_eq!(status(format!("{metrics}/openapi.json")).await, 404);
    // Not on the API's listener any more; the probes and the API are.
    assert_eq!(status(format!("{}/metrics", api.base)).await, 404);
    assert_eq!(status(format!("{}/healthz", api.base)).await, 200);
    assert_eq!(status(format!("{}/openapi.json", api.base)).await, 200);
    runtime.shutdown().await;
}
