//! Traces end to end: a real OTLP/HTTP receiver on 127.0.0.1:0 decodes
//! what the runtime exports, and the webhook receiver records the
//! `traceparent` each attempt sends.

use remit::store::Schedule;
use std::collections::HashSet;
use std::time::Duration;

use remit::domain::{Region, TaskId, TaskState};
use remit_actors::app::Runtime;
use serde_json::{json, Value};

use crate::support::captured_log::CapturedLog;
use crate::support::otlp::{ExportedSpan, OtlpReceiver, CLIENT, SERVER};
use crate::support::{self, Receiver, Reply, TestDb, API_TOKEN};

/// A caller's own trace: the scheduling request is its child.
const CALLER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
/// Invalid (its parent id is all zeros): ignored, a new trace starts.
const INVALID: &str = "00-1af7651916cd43dd8448eb211c80319c-0000000000000000-01";
/// Marks the payloads, which must never reach a span.
const PAYLOAD_MARK: &str = "blood-pressure-140-90";

fn task_body(reminder: &str, destination: &str) -> Value {
    json!({
        "tenant_id": "clinic-1",
        "reminder_id": reminder,
        "destination_id": destination,
        "region": "us",
        "not_before": chrono::Utc::now().to_rfc3339(),
        "payload": {"reading": PAYLOAD_MARK},
    })
}

/// POSTs `body` to the API with the caller's `traceparent`, if any.
async fn post(base: &str, path: &str, traceparent: Option<&str>, body: Value) -> Value {
    let mut request = awc::Client::default()
        .post(format!("{base}{path}"))
        .insert_header(("authorization", format!("Bearer {API_TOKEN}")));
    if let Some(traceparent) = traceparent {
        request = request.insert_header(("traceparent", traceparent));
    }
    let mut response = request.send_json(&body).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    serde_json::from_slice(&response.body().await.unwrap()).unwrap()
}

fn task_id(answer: &Value) -> TaskId {
    TaskId(answer["id"].as_str().unwrap().parse().unwrap())
}

/// The one span that `matches`, or a failure listing what was exported.
fn only<'a>(
    spans: &'a [ExportedSpan],
    what: &str,
    matches: impl Fn(&ExportedSpan) -> bool,
) -> &'a ExportedSpan {
    let found: Vec<_> = spans.iter().filter(|s| matches(s)).collect();
    assert_eq!(found.len(), 1, "{what}: {found:#?}\nall spans: {spans:#?}");
    found[0]
}

fn attempts_of(spans: &[ExportedSpan], task: TaskId) -> Vec<&ExportedSpan> {
    let mut found: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "attempt" && s.attribute("remit.task.id") == Some(&task.to_string()))
        .collect();
    found.sort_by_key(|s| s.attribute("remit.attempt").map(str::to_owned));
    found
}

#[actix_rt::test]
async fn each_attempt_is_a_child_of_the_request_that_scheduled_it() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let otlp = OtlpReceiver::start();
    // The caller's task fails once, so it has two attempts.
    receiver.script("/traced", vec![Reply::status(500)], Reply::ok());
    support::destination(&db, "traced", Region::US, &receiver.url("/traced"), None).await;
    support::destination(&db, "fresh", Region::US, &receiver.url("/fresh"), None).await;
    support::destination(&db, "batched", Region::US, &receiver.url("/batched"), None).await;
    let mut config = support::config(&db, Region::US, "us-1");
    config.tracing.otlp_endpoint = Some(otlp.endpoint());
    config.retry.backoff_base_ms = 10;
    let log = CapturedLog::default();
    remit_actors::app::install_crypto_provider();
    let runtime = Runtime::start(config, db.store.clone(), log.logger())
        .await
        .unwrap();
    let base = format!("http://{}", runtime.api_addr());

    let traced = task_id(&post(&base, "/v1/tasks", Some(CALLER), task_body("t1", "traced")).await);
    let fresh = task_id(&post(&base, "/v1/tasks", None, task_body("f1", "fresh")).await);
    let batch = json!({"tasks": [task_body("b1", "batched")]});
    let batched = post(&base, "/v1/tasks/batch", Some(INVALID), batch).await;
    let batched = task_id(&batched["results"][0]);
    let tasks = [traced, fresh, batched];
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(10)).await;
    // Shutdown exports what is left in the batch.
    runtime.shutdown().await;
    let spans = otlp.spans();

    // The request that came with a valid traceparent is its child.
    let caller_trace = &CALLER[3..35];
    let scheduled_traced = only(&spans, "the caller's request", |s| {
        s.name == "POST /v1/tasks" && s.trace_id == caller_trace
    });
    assert_eq!(scheduled_traced.kind, SERVER);
    assert_eq!(scheduled_traced.parent_span_id, &CALLER[36..52]);
    assert_eq!(
        scheduled_traced.attribute("http.response.status_code"),
        Some("201")
    );
    assert_eq!(scheduled_traced.attribute("http.route"), Some("/v1/tasks"));
    // Without one, the request's span is a root; with an invalid one too,
    // in a trace of its own.
    let scheduled_fresh = only(&spans, "the request without a traceparent", |s| {
        s.name == "POST /v1/tasks" && s.trace_id != caller_trace
    });
    assert_eq!(scheduled_fresh.parent_span_id, "");
    let scheduled_batch = only(&spans, "the batch request", |s| {
        s.name == "POST /v1/tasks/batch"
    });
    assert_eq!(scheduled_batch.parent_span_id, "");
    assert_ne!(scheduled_batch.trace_id, &INVALID[3..35]);
    assert_ne!(scheduled_batch.trace_id, scheduled_fresh.trace_id);

    // Each attempt is a child of the request that scheduled its task, and
    // its webhook carries the attempt's own traceparent.
    for (task, scheduled, path, attempts) in [
        (traced, scheduled_traced, "/traced", 2),
        (fresh, scheduled_fresh, "/fresh", 1),
        (batched, scheduled_batch, "/batched", 1),
    ] {
        let spans_of_task = attempts_of(&spans, task);
        assert_eq!(spans_of_task.len(), attempts, "{path}: {spans:#?}");
        for attempt in &spans_of_task {
            assert_eq!(attempt.kind, CLIENT);
            assert_eq!(attempt.trace_id, scheduled.trace_id, "{path}");
            assert_eq!(attempt.parent_span_id, scheduled.span_id, "{path}");
            assert_eq!(attempt.attribute("remit.destination.id"), Some(&path[1..]));
        }
        let sent: HashSet<String> = receiver
            .requests_to(path)
            .iter()
            .map(|r| r.header("traceparent").unwrap().to_owned())
            .collect();
        let expected: HashSet<String> = spans_of_task
            .iter()
            .map(|s| format!("00-{}-{}-01", s.trace_id, s.span_id))
            .collect();
        assert_eq!(sent, expected, "{path}");
        let last = spans_of_task.last().unwrap();
        assert_eq!(last.attribute("remit.outcome"), Some("delivered"));
        assert_eq!(last.attribute("http.response.status_code"), Some("200"));
    }
    // An attempt's log lines carry its trace id.
    let lines = log.lines();
    for (task, outcome) in [
        (traced, "will retry"),
        (traced, "delivered"),
        (fresh, "delivered"),
    ] {
        let trace_id = &attempts_of(&spans, task)[0].trace_id;
        let line = lines
            .iter()
            .find(|l| l.starts_with(outcome) && l.contains(&format!("task={task}")))
            .unwrap_or_else(|| panic!("no {outcome} line for {task} in {lines:#?}"));
        assert!(line.contains(&format!("trace_id={trace_id}")), "{line}");
    }

    let first_try = attempts_of(&spans, traced)[0];
    assert_eq!(first_try.attribute("remit.attempt"), Some("1"));
    assert_eq!(
        first_try.attribute("http.response.status_code"),
        Some("500")
    );
    assert_eq!(first_try.attribute("remit.outcome"), Some("retry_wait"));

    // Claims that found work are traced, linked to their tasks' traces.
    let links: HashSet<_> = spans
        .iter()
        .filter(|s| s.name == "claim")
        .flat_map(|s| s.links.iter().cloned())
        .collect();
    for scheduled in [scheduled_traced, scheduled_fresh, scheduled_batch] {
        let link = (scheduled.trace_id.clone(), scheduled.span_id.clone());
        assert!(links.contains(&link), "no claim links to {link:?}");
    }

    // Who sent them, and never a payload.
    for span in &spans {
        assert_eq!(
            span.resource.get("service.name").map(String::as_str),
            Some("remit")
        );
        assert_eq!(
            span.resource.get("remit.region").map(String::as_str),
            Some("us")
        );
        let values = span.attributes.values().chain(span.resource.values());
        assert!(
            values.clone().all(|v| !v.contains(PAYLOAD_MARK)),
            "a payload reached a span: {span:#?}"
        );
    }
    // The task keeps its request's traceparent.
    let kept = db.store.task(traced).await.unwrap().unwrap().traceparent;
    assert_eq!(
        kept.map(|t| t.to_string()),
        Some(format!(
            "00-{}-{}-01",
            scheduled_traced.trace_id, scheduled_traced.span_id
        ))
    );
}

#[actix_rt::test]
async fn with_tracing_off_nothing_is_kept_or_sent() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    support::destination(&db, "plain", Region::US, &receiver.url("/plain"), None).await;
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &db.store).await;
    let base = format!("http://{}", runtime.api_addr());
    let task = task_id(&post(&base, "/v1/tasks", Some(CALLER), task_body("p1", "plain")).await);
    support::wait_for_state(&db, &[task], TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;

    assert_eq!(
        db.store.task(task).await.unwrap().unwrap().traceparent,
        None
    );
    let request = &receiver.requests_to("/plain")[0];
    assert_eq!(request.header("traceparent"), None);
}

#[actix_rt::test]
async fn a_collector_that_is_down_costs_only_the_spans() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    support::destination(&db, "plain", Region::US, &receiver.url("/plain"), None).await;
    // A port nothing listens on any more.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut config = support::config(&db, Region::US, "us-1");
    config.tracing.otlp_endpoint = Some(format!("http://user:hunter2@{closed}"));
    let log = CapturedLog::default();
    remit_actors::app::install_crypto_provider();
    let runtime = Runtime::start(config, db.store.clone(), log.logger())
        .await
        .unwrap();
    let base = format!("http://{}", runtime.api_addr());
    let tasks = [
        task_id(&post(&base, "/v1/tasks", Some(CALLER), task_body("d1", "plain")).await),
        task_id(&post(&base, "/v1/tasks", None, task_body("d2", "plain")).await),
    ];
    support::wait_for_state(&db, &tasks, TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;

    // Delivery went on as ever, the receiver could still join the trace,
    // and the failed export was logged once, without the credentials.
    let sent = receiver.requests_to("/plain");
    assert_eq!(sent.len(), 2);
    assert!(sent
        .iter()
        .any(|r| r.header("traceparent").unwrap().starts_with(&CALLER[..35])));
    let lines = log.lines();
    let warnings: Vec<_> = lines
        .iter()
        .filter(|l| l.starts_with("spans could not be exported"))
        .collect();
    assert_eq!(warnings.len(), 1, "{lines:#?}");
    assert!(
        warnings[0].contains(&format!("endpoint=http://{closed}/v1/traces")),
        "{}",
        warnings[0]
    );
    assert!(!lines.iter().any(|l| l.contains("hunter2")), "{lines:#?}");
}

/// A caller that does not record its trace is followed: neither its
/// request nor the attempts are recorded, and the receiver still gets a
/// `traceparent` in the caller's trace, unsampled.
#[actix_rt::test]
async fn a_trace_the_caller_does_not_sample_stays_unsampled() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let otlp = OtlpReceiver::start();
    support::destination(&db, "quiet", Region::US, &receiver.url("/quiet"), None).await;
    support::destination(&db, "loud", Region::US, &receiver.url("/loud"), None).await;
    let mut config = support::config(&db, Region::US, "us-1");
    config.tracing.otlp_endpoint = Some(otlp.endpoint());
    let runtime = support::start(config, &db.store).await;
    let base = format!("http://{}", runtime.api_addr());
    let unsampled = CALLER.replace("-01", "-00");
    let quiet = task_id(
        &post(
            &base,
            "/v1/tasks",
            Some(&unsampled),
            task_body("q1", "quiet"),
        )
        .await,
    );
    let loud = task_id(&post(&base, "/v1/tasks", None, task_body("l1", "loud")).await);
    support::wait_for_state(
        &db,
        &[quiet, loud],
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    runtime.shutdown().await;

    let spans = otlp.spans();
    assert!(
        spans.iter().all(|s| s.trace_id != CALLER[3..35]),
        "nothing of the unsampled trace is recorded: {spans:#?}"
    );
    assert_eq!(attempts_of(&spans, quiet).len(), 0);
    // The sampled one next to it is recorded, so the exporter did run.
    assert_eq!(attempts_of(&spans, loud).len(), 1);
    let sent = receiver.requests_to("/quiet");
    let header = sent[0].header("traceparent").unwrap();
    assert!(
        header.starts_with(&CALLER[..36]) && header.ends_with("-00"),
        "{header}"
    );
}
