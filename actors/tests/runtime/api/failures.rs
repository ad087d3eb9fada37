//! A 500 answers "internal error" and is logged with its cause, never with
//! payload bytes.

use chrono::Utc;
use remit::domain::Region;
use remit_actors::app::Runtime;

use super::client::Api;
use crate::support::captured_log::CapturedLog;
use crate::support::otlp::OtlpReceiver;
use crate::support::{self, TestDb};

#[actix_rt::test]
async fn a_server_error_is_logged_with_its_cause() {
    let db = TestDb::with_database_clock().await;
    let log = CapturedLog::default();
    let otlp = OtlpReceiver::start();
    remit_actors::app::install_crypto_provider();
    let mut config = support::config(&db, Region::EU, "eu-1");
    config.tracing.otlp_endpoint = Some(otlp.endpoint());
    let runtime = Runtime::start(config, db.store.clone(), log.logger())
        .await
        .unwrap();
    let api = Api::new(&runtime);

    let dest = support::destination(&db, "crm", Region::EU, "http://127.0.0.1:9/", None).await;
    let later = Utc::now() + chrono::Duration::hours(1);
    let id = support::task_at(&db, "r1", &dest, Region::EU, later).await;
    // A value no status can have: reading the row fails.
    db.execute(&format!(
        "UPDATE tasks SET last_status = -1 WHERE id = '{}'",
        id.0
    ))
    .await;

    let (status, body) = api.get(&format!("/v1/tasks/{}", id.0)).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(body["error"]["code"], "internal");
    assert_eq!(body["error"]["message"], "internal error");

    runtime.shutdown().await;
    let records = log.lines();
    let failure = records
        .iter()
        .find(|line| line.starts_with("API request failed"))
        .unwrap_or_else(|| panic!("no failure logged in {records:#?}"));
    assert!(failure.contains("route=/v1/tasks/{id}"), "{failure}");
    assert!(failure.contains("status=500"), "{failure}");
    assert!(
        failure.contains("internal error: corrupt or unknown value in column tasks.last_status"),
        "the cause is in the log: {failure}"
    );
    // With the trace id of the request's span.
    let spans = otlp.spans();
    let request = spans
        .iter()
        .find(|s| s.name == "GET /v1/tasks/{id}")
        .unwrap_or_else(|| panic!("no span of the request in {spans:#?}"));
    assert_eq!(request.attribute("http.response.status_code"), Some("500"));
    assert!(
        failure.contains(&format!("trace_id={}", request.trace_id)),
        "{failure}"
    );
    assert!(
        !records
            .iter()
            .any(|line| line.contains(r#"{"reminder":"r1"}"#)),
        "no payload in the logs"
    );
}
