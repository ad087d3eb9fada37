//! GET /openapi.json serves docs/openapi.json, and every operation the
//! document lists is routed, answering only statuses it documents.

use remit::domain::Region;
use serde_json::{json, Value};

use super::client::Api;
use crate::support::{self, TestDb, API_TOKEN};

fn checked_in() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[actix_rt::test]
async fn the_served_document_is_docs_openapi_json_and_matches_the_routes() {
    let db = TestDb::with_database_clock().await;
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let api = Api::new(&runtime);
    let document = checked_in();

    // No token needed, like /metrics.
    let (status, served) = api.call("GET", "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert!(
        served == document,
        "GET /openapi.json is not docs/openapi.json; regenerate the file with \
         REMIT_WRITE_OPENAPI=1 cargo test -p remit-actors --lib openapi"
    );

    // Every operation answers only statuses it documents, and every error
    // (the router's 404 and 405 too) has the error body.
    let paths = document["paths"].as_object().unwrap();
    for (path, operations) in paths {
        let path = path.replace("{id}", "no-such-id");
        for (method, operation) in operations.as_object().unwrap() {
            let body = (method == "post").then(|| json!({}));
            let (status, answer) = api
                .call(&method.to_uppercase(), &path, Some(API_TOKEN), body)
                .await;
            assert!(
                operation["responses"].get(status.to_string()).is_some(),
                "{method} {path} answered {status}, which it does not document: {answer}"
            );
            if status >= 400 {
                assert!(
                    answer["error"]["code"].is_string(),
                    "{method} {path} answered {status} without an error body: {answer}"
                );
            }
        }
    }
    runtime.shutdown().await;
}
