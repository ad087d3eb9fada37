//! Data residency: a region's claim sees only its own rows.

use remit::domain::Region;

use crate::support::TestDb;

#[tokio::test]
async fn an_eu_claim_never_returns_a_us_row() {
    let db = TestDb::new().await;
    let us = db.destination("us-crm", Region::US).await;
    let eu = db.destination("eu-crm", Region::EU).await;
    for i in 0..20 {
        db.task(&format!("us-{i}"), &us, Region::US).await;
    }
    db.task("eu-0", &eu, Region::EU).await;

    let claimed = db.claim(Region::EU, "eu-1", 100).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].task.region, Region::EU);
    assert!(db.claim(Region::EU, "eu-1", 100).await.is_empty());

    let claimed = db.claim(Region::US, "us-1", 100).await;
    assert_eq!(claimed.len(), 20);
    assert!(claimed.iter().all(|c| c.task.region == Region::US));
}

#[tokio::test]
async fn the_schema_refuses_a_task_in_another_region_than_its_destination() {
    let db = TestDb::new().await;
    db.destination("us-crm", Region::US).await;
    db.execute(
        "INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext)
         VALUES ('00000000-0000-0000-0000-000000000001', 'text/plain', '\\x00', '\\x00', '\\x00')",
    )
    .await;
    let mut conn = db.conn().await;
    let inserted = diesel_async::RunQueryDsl::execute(
        diesel::sql_query(
            "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, not_before,
                                available_at, retry_horizon_at, idempotency_key, payload_ref)
             VALUES (gen_random_uuid(), 't', 'r', 'us-crm', 'eu', now(), now(), now(), 'k',
                     '00000000-0000-0000-0000-000000000001')",
        ),
        &mut conn,
    )
    .await;
    assert!(
        inserted.is_err(),
        "the composite key pins a task to its destination's region"
    );
}
