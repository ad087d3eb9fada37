//! Rolling upgrades: code never claims or rewrites a row in a state it
//! does not know, so a newer schema can add states while older consumers
//! still run.

use chrono::Duration;
use remit::domain::{AttemptRecord, Lease, ReconcileRequest, Region};
use remit::store::{Leases, Rates, Schedule, StoreError, TransitionOutcome, Upkeep};

use crate::support::{delivered, TestDb};

#[tokio::test]
async fn rows_in_a_state_added_later_are_left_alone() {
    let db = TestDb::new().await;
    let dest = db.destination("crm", Region::US).await;
    let held = db.task("held", &dest, Region::US).await;
    let normal = db.task("normal", &dest, Region::US).await;

    // What a newer release's migration might do.
    db.execute("ALTER TYPE task_state ADD VALUE 'quarantined'")
        .await;
    db.execute(&format!(
        "UPDATE tasks SET state = 'quarantined' WHERE id = '{}'",
        held.0
    ))
    .await;
    let before = db.count("SELECT (extract(epoch FROM updated_at) * 1000000)::bigint AS n FROM tasks WHERE state = 'quarantined'").await;

    db.clock().advance(Duration::days(1));
    let claimed = db.claim(Region::US, "us-1", 10).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.id, normal, "only the row in a known state");

    let guess = Lease {
        task_id: held,
        token: claimed[0].lease_token,
        owner: "us-1".into(),
        attempt: 1,
    };
    assert_eq!(
        db.store
            .finish(&guess, &dest, &delivered(AttemptRecord::default()))
            .await
            .unwrap(),
        TransitionOutcome::Fenced
    );
    assert_eq!(
        db.store.hand_back(&guess, None).await.unwrap(),
        TransitionOutcome::Fenced
    );
    let reconciled = db
        .store
        .reconcile(&ReconcileRequest {
            region: None,
            older_than: Duration::minutes(1),
            reclaim: true,
            ledger: None,
            list_limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(reconciled.reclaimed, 0);

    // Reading it is a clear error, never a guess at what the state means.
    match db.store.task(held).await {
        Err(e @ StoreError::Query(_)) => {
            assert!(format!("{e:?}").contains("quarantined"), "{e:?}")
        }
        other => panic!("expected an error naming the unknown state, got {other:?}"),
    }
    assert_eq!(
        db.count("SELECT count(*) AS n FROM tasks WHERE state = 'quarantined'")
            .await,
        1
    );
    assert_eq!(
        db.count("SELECT (extract(epoch FROM updated_at) * 1000000)::bigint AS n FROM tasks WHERE state = 'quarantined'").await,
        before,
        "never rewritten"
    );
}

/// The hot statements are prepared once per connection; a newer schema
/// adding columns under a running process must not break them.
#[tokio::test]
async fn prepared_statements_outlive_a_column_added_by_a_newer_schema() {
    use remit::policy::{Decision, Transition};
    use remit::store::{Finish, RateRequest};

    let db = TestDb::with_pool(1).await;
    let dest = db.destination("crm", Region::US).await;
    for i in 0..8 {
        db.task(&format!("r{i}"), &dest, Region::US).await;
    }
    db.clock().advance(Duration::days(1));
    let deliver = |claimed: &remit::domain::ClaimedTask| Finish {
        lease: claimed.lease(),
        destination: dest.clone(),
        decision: Decision {
            transition: Transition::Deliver,
            pause_destination_until: None,
            record: AttemptRecord {
                http_status: Some(200),
                ..AttemptRecord::default()
            },
        },
    };
    let ask = RateRequest {
        destination: dest.clone(),
        rate_per_second: 100.0,
        burst: 100,
        want: 1,
    };
    let round = async || {
        let claimed = db.claim(Region::US, "us-1", 1).await;
        assert_eq!(claimed.len(), 1);
        let outcomes = db
            .store
            .finish_many(&[deliver(&claimed[0])])
            .await
            .unwrap()
            .outcomes;
        assert_eq!(outcomes, vec![TransitionOutcome::Applied]);
        db.store
            .take_tokens_many(std::slice::from_ref(&ask))
            .await
            .unwrap();
    };
    // More than five runs on the one connection: PostgreSQL keeps a
    // generic plan for each statement by then.
    for _ in 0..6 {
        round().await;
    }
    for table in ["tasks", "attempts", "destinations", "payloads"] {
        db.execute(&format!("ALTER TABLE {table} ADD COLUMN added_later text"))
            .await;
    }
    round().await;
}
