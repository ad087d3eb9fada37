//! One busy destination cannot take every claim slot.

use remit::store::{ClaimRequest, Leases};
use std::collections::HashMap;

use remit::domain::Region;

use crate::support::TestDb;

/// Inserts `n` due tasks for `destination` in one statement; scheduling
/// 10,000 rows one by one would dominate the test's time.
async fn bulk_tasks(db: &TestDb, destination: &str, n: usize) {
    db.execute(&format!(
        "WITH p AS (
             INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext)
             SELECT gen_random_uuid(), 'application/json', '\\x00', '\\x00', '\\x00'
             FROM generate_series(1, {n})
             RETURNING payload_ref)
         INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, not_before,
                            available_at, retry_horizon_at, idempotency_key, payload_ref)
         SELECT gen_random_uuid(), 'clinic-1', '{destination}-' || payload_ref, '{destination}', 'us',
                '2026-08-13T09:00:00Z', '2026-08-13T09:00:00Z', '2026-08-16T09:00:00Z',
                'msg_' || payload_ref, payload_ref
         FROM p"
    ))
    .await;
}

#[tokio::test]
async fn one_claim_reaches_every_destination_with_work() {
    let db = TestDb::new().await;
    db.destination("busy", Region::US).await;
    bulk_tasks(&db, "busy", 10_000).await;
    for d in 0..10 {
        let name = format!("quiet-{d}");
        db.destination(&name, Region::US).await;
        bulk_tasks(&db, &name, 10).await;
    }
    db.execute("ANALYZE tasks").await;

    let claimed = db
        .store
        .claim_due(&ClaimRequest {
            region: Region::US,
            lease_owner: "us-1".into(),
            lease: chrono::Duration::seconds(30),
            limit: 64,
            per_destination_cap: 16,
            caps: Vec::new(),
            skip: Vec::new(),
            resume_after: None,
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 64);
    let mut per_destination: HashMap<&str, usize> = HashMap::new();
    for c in &claimed {
        *per_destination
            .entry(c.task.destination_id.as_str())
            .or_default() += 1;
    }
    assert_eq!(per_destination.len(), 11, "{per_destination:?}");
    assert!(
        per_destination.values().all(|&n| n <= 16),
        "{per_destination:?}"
    );
}

#[tokio::test]
async fn the_per_destination_cap_holds_even_when_alone() {
    let db = TestDb::new().await;
    db.destination("busy", Region::US).await;
    bulk_tasks(&db, "busy", 100).await;
    let claimed = db
        .store
        .claim_due(&ClaimRequest {
            region: Region::US,
            lease_owner: "us-1".into(),
            lease: chrono::Duration::seconds(30),
            limit: 64,
            per_destination_cap: 5,
            caps: Vec::new(),
            skip: Vec::new(),
            resume_after: None,
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 5);
}
