//! A 500 answers "internal error" and is logged with its cause, never with
//! payload bytes.

use std::sync::{Arc, Mutex};

use chrono::Utc;
use remit::domain::Region;
use remit_actors::app::Runtime;

use super::client::Api;
use crate::support::{self, TestDb};

/// Keeps every log record as one line: the message, then key=value pairs.
struct Capture(Arc<Mutex<Vec<String>>>);

impl slog::Drain for Capture {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &slog::Record, values: &slog::OwnedKVList) -> Result<(), slog::Never> {
        let mut line = Line(record.msg().to_string());
        let _ = slog::KV::serialize(&record.kv(), record, &mut line);
        let _ = slog::KV::serialize(values, record, &mut line);
        self.0.lock().unwrap().push(line.0);
        Ok(())
    }
}

struct Line(String);

impl slog::Serializer for Line {
    fn emit_arguments(&mut self, key: slog::Key, value: &std::fmt::Arguments) -> slog::Result {
        self.0.push_str(&format!(" {key}={value}"));
        Ok(())
    }
}

#[actix_rt::test]
async fn a_server_error_is_logged_with_its_cause() {
    let db = TestDb::with_database_clock().await;
    let records = Arc::new(Mutex::new(Vec::new()));
    let log = slog::Logger::root(Capture(records.clone()), slog::o!());
    remit_actors::app::install_crypto_provider();
    let config = support::config(&db, Region::EU, "eu-1");
    let runtime = Runtime::start(config, db.store.clone(), log).await.unwrap();
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
    let records = records.lock().unwrap().clone();
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
    assert!(
        !records
            .iter()
            .any(|line| line.contains(r#"{"reminder":"r1"}"#)),
        "no payload in the logs"
    );
}
