//! A process holding the wrong payload key never sends garbage and does
//! not crash-loop: it hands the task back for a process with the right key.

use remit::store::Schedule;
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};
use remit::payload_crypto::PayloadKey;

use crate::support::{self, Receiver, TestDb};

#[actix_rt::test]
async fn a_wrong_key_hands_the_task_back_unsent() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::US, &receiver.url("/hook"), None).await;
    let id = support::task(&db, "r1", &dest, Region::US).await;
    let wrong = db.another_store(PayloadKey::from_bytes([9; 32])).await;
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &wrong).await;

    let deadline = Instant::now() + Duration::from_secs(10);
    let task = loop {
        let task = db.store.task(id).await.unwrap().unwrap();
        if task.state == TaskState::Pending && task.available_at > chrono::Utc::now() {
            break task;
        }
        assert!(
            Instant::now() < deadline,
            "the task was never handed back: {task:?}"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    };
    let stats = runtime.stats();
    let restarts = remit_actors::runtime::RuntimeStats::read(&stats.restarts);
    runtime.shutdown().await;

    assert!(receiver.requests().is_empty(), "nothing was sent");
    assert_eq!(task.attempt_count, 0, "not counted as an attempt");
    assert!(db.store.attempts(id).await.unwrap().is_empty());
    assert_eq!(restarts, 0, "no crash loop");
}

/// A hand-back never ends a task that was never attempted, even one whose
/// horizon has passed: the process with the wrong key hands it back for
/// its minute, and a process with the right key sends it once it is due.
#[actix_rt::test]
async fn a_task_never_attempted_outlives_its_horizon_until_a_process_can_send_it() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::US, &receiver.url("/hook"), None).await;
    // Its horizon ends with its deadline: the minute it is handed back for
    // lies past it.
    let id = db
        .store
        .schedule(remit::domain::NewTask {
            traceparent: None,
            tenant_id: remit::domain::TenantId::new("clinic-1").unwrap(),
            reminder_id: remit::domain::ReminderId::new("r1").unwrap(),
            destination_id: dest.clone(),
            region: Region::US,
            not_before: chrono::Utc::now(),
            retry_horizon: chrono::Duration::zero(),
            payload: remit::domain::Payload::json(r#"{"reminder":"r1"}"#),
            ordering_key: None,
        })
        .await
        .unwrap()
        .task
        .id;
    let wrong = db.another_store(PayloadKey::from_bytes([9; 32])).await;
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &wrong).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let task = db.store.task(id).await.unwrap().unwrap();
        assert_ne!(task.state, TaskState::Failed, "ended untried: {task:?}");
        if task.state == TaskState::Pending && task.available_at > chrono::Utc::now() {
            break;
        }
        assert!(Instant::now() < deadline, "never handed back: {task:?}");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
    runtime.shutdown().await;
    assert!(receiver.requests().is_empty(), "nothing was sent");

    // Its minute, passed (the row backdated), and a process with the key.
    db.execute(&format!(
        "UPDATE tasks SET available_at = not_before WHERE id = '{}'",
        id.0
    ))
    .await;
    let runtime = support::start(support::config(&db, Region::US, "us-2"), &db.store).await;
    support::wait_for_state(&db, &[id], TaskState::Delivered, Duration::from_secs(10)).await;
    runtime.shutdown().await;
    assert_eq!(receiver.requests().len(), 1);
}

/// A payload no key opens (its stored bytes altered) is not handed back
/// forever: once its horizon has passed it fails `payload_unreadable`,
/// unsent, recorded for the `task.failed` event, and the task behind it in
/// its ordering line is delivered.
#[actix_rt::test]
async fn a_payload_no_key_opens_ends_at_its_horizon_and_its_line_moves_on() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    let dest = support::destination(&db, "crm", Region::US, &receiver.url("/hook"), None).await;
    let in_line = |reminder: &str, horizon: chrono::Duration| remit::domain::NewTask {
        traceparent: None,
        tenant_id: remit::domain::TenantId::new("clinic-1").unwrap(),
        reminder_id: remit::domain::ReminderId::new(reminder).unwrap(),
        destination_id: dest.clone(),
        region: Region::US,
        not_before: chrono::Utc::now() - chrono::Duration::seconds(1),
        retry_horizon: horizon,
        payload: remit::domain::Payload::json(format!(r#"{{"reminder":"{reminder}"}}"#)),
        ordering_key: Some(remit::domain::OrderingKey::new("patient-7").unwrap()),
    };
    // The head's horizon ended with its deadline, a second ago.
    let head = db
        .store
        .schedule(in_line("head", chrono::Duration::zero()))
        .await
        .unwrap()
        .task;
    let next = db
        .store
        .schedule(in_line("next", chrono::Duration::hours(1)))
        .await
        .unwrap()
        .task;
    // A byte of the head's sealed body flipped: the right key cannot open it.
    db.execute(&format!(
        "UPDATE payloads SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 255) \
         WHERE payload_ref = '{}'",
        head.payload_ref
    ))
    .await;
    let runtime = support::start(support::config(&db, Region::US, "us-1"), &db.store).await;
    support::wait_for_state(
        &db,
        &[next.id],
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    let stats = runtime.stats();
    let restarts = remit_actors::runtime::RuntimeStats::read(&stats.restarts);
    runtime.shutdown().await;

    let head = db.store.task(head.id).await.unwrap().unwrap();
    assert_eq!(head.state, TaskState::Failed);
    assert_eq!(head.failure_reason.as_deref(), Some("payload_unreadable"));
    let sent = receiver.requests();
    assert_eq!(sent.len(), 1, "only the next task was sent");
    assert_eq!(sent[0].body, br#"{"reminder":"next"}"#);
    assert_eq!(
        db.count(&format!(
            "SELECT count(*) AS n FROM task_failures WHERE task_id = '{}' \
             AND failure_reason = 'payload_unreadable'",
            head.id
        ))
        .await,
        1,
        "recorded for the task.failed event"
    );
    assert_eq!(restarts, 0, "no crash loop");
}
