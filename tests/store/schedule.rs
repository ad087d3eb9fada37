//! Scheduling: idempotent, validated, all or nothing.

use chrono::Duration;
use remit::domain::{DestinationId, Payload, Region, TaskState, MAX_PAYLOAD_BYTES};
use remit::store::{Leases, Schedule, StoreError};

use crate::support::{new_task, t0, TestDb};

async fn rows(db: &TestDb) -> (i64, i64) {
    (
        db.count("SELECT count(*) AS n FROM tasks").await,
        db.count("SELECT count(*) AS n FROM payloads").await,
    )
}

#[tokio::test]
async fn a_new_task_is_pending_at_its_deadline_with_a_stable_key() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::EU).await;
    let scheduled = db
        .store
        .schedule(new_task("r1", &dest, Region::EU))
        .await
        .unwrap();
    assert!(scheduled.created);
    let task = scheduled.task;
    assert_eq!(task.state, TaskState::Pending);
    assert_eq!(task.not_before, t0());
    assert_eq!(task.available_at, t0());
    assert_eq!(task.retry_horizon_at, t0() + Duration::days(3));
    assert_eq!(task.attempt_count, 0);
    assert!(task.idempotency_key.starts_with("msg_"));
}

#[tokio::test]
async fn the_same_request_again_returns_the_same_task() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::EU).await;
    let first = db
        .store
        .schedule(new_task("r1", &dest, Region::EU))
        .await
        .unwrap();
    let again = db
        .store
        .schedule(new_task("r1", &dest, Region::EU))
        .await
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.task, first.task);
    assert_eq!(rows(&db).await, (1, 1));
}

#[tokio::test]
async fn concurrent_repeats_create_one_task() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::EU).await;
    let (a, b) = tokio::join!(
        db.store.schedule(new_task("r1", &dest, Region::EU)),
        db.store.schedule(new_task("r1", &dest, Region::EU)),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.task.id, b.task.id);
    assert_eq!(
        rows(&db).await,
        (1, 1),
        "the loser's payload is rolled back"
    );
}

#[tokio::test]
async fn same_ids_with_other_content_is_a_conflict() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::EU).await;
    db.store
        .schedule(new_task("r1", &dest, Region::EU))
        .await
        .unwrap();

    let mut other_payload = new_task("r1", &dest, Region::EU);
    other_payload.payload = Payload::json(r#"{"diagnosis":"changed"}"#);
    let err = db.store.schedule(other_payload).await.unwrap_err();
    match &err {
        StoreError::Conflict { differs, .. } => assert_eq!(differs, "payload"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(
        !err.to_string().contains("diagnosis"),
        "errors never carry payload bytes"
    );

    let mut later = new_task("r1", &dest, Region::EU);
    later.not_before = t0() + Duration::hours(1);
    assert!(matches!(
        db.store.schedule(later).await,
        Err(StoreError::Conflict { differs, .. }) if differs == "not_before"
    ));
    assert_eq!(rows(&db).await, (1, 1));
}

#[tokio::test]
async fn bad_input_names_the_field_and_writes_nothing() {
    let db = TestDb::new().await;
    let eu = db.destination("crm", Region::EU).await;

    let unknown = DestinationId::new("nowhere").unwrap();
    let wrong_region = new_task("r1", &eu, Region::US);
    let mut empty_type = new_task("r1", &eu, Region::EU);
    empty_type.payload.content_type = " ".into();
    let mut too_big = new_task("r1", &eu, Region::EU);
    too_big.payload.body = vec![b'x'; MAX_PAYLOAD_BYTES + 1];
    let mut negative_horizon = new_task("r1", &eu, Region::EU);
    negative_horizon.retry_horizon = Duration::seconds(-1);

    let cases = [
        (new_task("r1", &unknown, Region::EU), "destination_id"),
        (wrong_region, "region"),
        (empty_type, "content_type"),
        (too_big, "payload"),
        (negative_horizon, "retry_horizon"),
    ];
    for (task, field) in cases {
        match db.store.schedule(task).await {
            Err(StoreError::Invalid(e)) => assert_eq!(e.field, field, "{e}"),
            other => panic!("{field}: expected invalid input, got {other:?}"),
        }
    }
    assert_eq!(rows(&db).await, (0, 0));
}

#[tokio::test]
async fn a_batch_leaves_no_payload_without_its_task() {
    let db = TestDb::new().await;
    let d = db.destination("crm", Region::EU).await;
    db.store
        .schedule(new_task("old", &d, Region::EU))
        .await
        .unwrap();
    let mut conflicting = new_task("old", &d, Region::EU);
    conflicting.payload = Payload::json("{}");
    let mut batch: Vec<_> = (0..1_500)
        .map(|i| new_task(&format!("r{i}"), &d, Region::EU))
        .collect();
    batch.push(conflicting);
    batch.push(new_task("r7", &d, Region::EU));
    let answers = db.store.schedule_many(batch).await.unwrap();
    assert_eq!(answers.len(), 1_502);
    assert_eq!(answers.iter().filter(|a| a.is_ok()).count(), 1_501);
    assert_eq!(db.count("SELECT count(*) AS n FROM tasks").await, 1_501);
    assert_eq!(
        db.count("SELECT count(*) AS n FROM payloads").await,
        1_501,
        "the conflict's and the repeat's payloads were not kept"
    );
}

#[tokio::test]
async fn a_product_schedules_inside_its_own_transaction() {
    use diesel_async::AsyncConnection;

    let db = TestDb::new().await;
    let d = db.destination("crm", Region::EU).await;
    let mut conn = db.conn().await;

    // The business write fails after scheduling: nothing of the reminder
    // stays.
    let rolled_back = conn
        .transaction::<(), StoreError, _>(async |conn| {
            let answers = db
                .pg()
                .schedule_many_on(conn, vec![new_task("r1", &d, Region::EU)])
                .await?;
            assert!(answers[0].as_ref().unwrap().created);
            // The business write fails.
            Err(StoreError::Query(
                diesel::result::Error::RollbackTransaction,
            ))
        })
        .await;
    assert!(rolled_back.is_err());
    assert_eq!(db.count("SELECT count(*) AS n FROM tasks").await, 0);
    assert_eq!(db.count("SELECT count(*) AS n FROM payloads").await, 0);

    // It commits: the reminder commits with it.
    conn.transaction::<(), StoreError, _>(async |conn| {
        db.pg()
            .schedule_many_on(conn, vec![new_task("r1", &d, Region::EU)])
            .await?;
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(db.count("SELECT count(*) AS n FROM tasks").await, 1);
}

/// The schema itself keeps `tasks.traceparent` to W3C version 00, so no
/// writer (an import, a hand edit) can leave one remit cannot send.
#[tokio::test]
async fn the_schema_refuses_a_traceparent_that_is_not_w3c_version_00() {
    for backend in crate::support::Backend::ALL {
        let db = TestDb::on(backend).await;
        let dest = db.destination("crm", Region::EU).await;
        let id = db.task("r1", &dest, Region::EU).await;
        let set =
            |value: &str| format!("UPDATE tasks SET traceparent = '{value}' WHERE id = '{id}'");
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(db.try_execute(&set(valid)).await.unwrap(), 1, "{backend:?}");
        for invalid in [
            &valid.to_uppercase(),
            &valid.replacen("00", "01", 1),
            &format!("{valid}0"),
            &valid[..54],
            &valid.replace("4bf9", "4bg9"),
            "",
        ] {
            assert!(
                db.try_execute(&set(invalid)).await.is_err(),
                "{backend:?} took {invalid:?}"
            );
        }
        db.execute(&format!(
            "UPDATE tasks SET traceparent = NULL WHERE id = '{id}'"
        ))
        .await;
    }
}

/// A keyed task scheduled inside a transaction that commits after a
/// later-scheduled task of its line (same `not_before`) was claimed waits
/// for that one: never two tasks of one line in flight at once.
#[tokio::test]
async fn a_line_scheduled_in_a_slow_transaction_still_goes_one_at_a_time() {
    use diesel_async::AsyncConnection;
    use remit::domain::OrderingKey;

    let db = TestDb::new().await;
    let d = db.destination("crm", Region::EU).await;
    let keyed = |r: &str| remit::domain::NewTask {
        ordering_key: Some(OrderingKey::new("patient-1").unwrap()),
        ..new_task(r, &d, Region::EU)
    };
    let mut conn = db.conn().await;
    let first_claim = std::sync::Mutex::new(Vec::new());
    conn.transaction::<(), StoreError, _>(async |conn| {
        // Scheduled first (its id is the earlier), committed last.
        db.pg().schedule_many_on(conn, vec![keyed("first")]).await?;
        db.store.schedule(keyed("second")).await.unwrap();
        let claimed = db
            .store
            .claim_due(&crate::support::claim(Region::EU, "c", 10))
            .await
            .unwrap();
        *first_claim.lock().unwrap() = claimed
            .iter()
            .map(|c| c.task.reminder_id.to_string())
            .collect();
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(*first_claim.lock().unwrap(), vec!["second".to_owned()]);
    let again = db
        .store
        .claim_due(&crate::support::claim(Region::EU, "c", 10))
        .await
        .unwrap();
    let again: Vec<String> = again
        .iter()
        .map(|c| c.task.reminder_id.to_string())
        .collect();
    assert!(
        again.is_empty(),
        "claimed {again:?} while `second` of its line is in flight"
    );
}
