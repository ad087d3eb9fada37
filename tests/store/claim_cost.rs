//! What a claim reads does not grow with destinations that have no live
//! work: measured with EXPLAIN (ANALYZE, BUFFERS) of the store's own claim
//! statement, before and after registering many idle destinations whose
//! ids fall between the busy ones (a walk over the region's destinations in
//! id order would have to step over every one of them).

use diesel::sql_types::Text;
use diesel::QueryableByName;

use crate::support::TestDb;

const CLAIM_SQL: &str = include_str!("../../src/store/postgres/claim.sql");

/// Busy destinations, each with one due task.
const BUSY: usize = 500;
/// Idle destinations registered afterwards.
const IDLE: usize = 50_000;
/// The claim's limit, as the runtime's default claims.
const LIMIT: i64 = 64;

#[derive(QueryableByName)]
struct Plan {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    plan: String,
}

/// Buffers (hit or read) the claim touches, measured inside a transaction
/// that is rolled back, so the rows stay as they were.
async fn claim_buffers(db: &TestDb) -> u64 {
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await;
    let run = |sql: String| diesel::sql_query(sql);
    run("BEGIN".into()).execute(&mut conn).await.unwrap();
    run(format!(
        "PREPARE measured_claim (timestamptz, text, text, bigint, int, int, text[], text, text) AS {CLAIM_SQL}"
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    let explained: Plan = run(format!(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
         EXECUTE measured_claim (NULL, 'us', 'cost', 30000, {LIMIT}, 16, '{{}}', '', '')"
    ))
    .get_result(&mut conn)
    .await
    .unwrap();
    run("ROLLBACK".into()).execute(&mut conn).await.unwrap();
    let json: serde_json::Value = serde_json::from_str(&explained.plan).unwrap();
    let top = &json[0]["Plan"];
    let hit = top["Shared Hit Blocks"].as_u64().unwrap();
    let read = top["Shared Read Blocks"].as_u64().unwrap();
    let claimed = top["Actual Rows"].as_u64().unwrap();
    assert_eq!(claimed, LIMIT as u64, "the claim leased a full batch");
    hit + read
}

#[tokio::test]
async fn a_claim_reads_no_more_with_many_idle_destinations() {
    let db = TestDb::with_database_clock().await;
    db.execute(&format!(
        "INSERT INTO destinations (id, region, url)
         SELECT 'd-' || lpad((i * 100)::text, 8, '0'), 'us', 'https://hooks.example.com/' || i
         FROM generate_series(1, {BUSY}) i"
    ))
    .await;
    db.execute(&format!(
        "WITH p AS (
             INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext)
             SELECT gen_random_uuid(), 'application/json', '\\x00', '\\x00', '\\x00'
             FROM generate_series(1, {BUSY})
             RETURNING payload_ref),
         numbered AS (SELECT payload_ref, row_number() OVER () AS i FROM p)
         INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, not_before,
                            available_at, retry_horizon_at, idempotency_key, payload_ref)
         SELECT gen_random_uuid(), 'clinic-1', 'r-' || i, 'd-' || lpad((i * 100)::text, 8, '0'),
                'us', now() - interval '1 minute', now() - interval '1 minute',
                now() + interval '1 day', 'msg_' || payload_ref, payload_ref
         FROM numbered"
    ))
    .await;
    db.execute("VACUUM ANALYZE tasks, destinations, payloads")
        .await;
    let few = claim_buffers(&db).await;

    // Ids between the busy ones: d-00000101 … d-00000199 lie between
    // d-00000100 and d-00000200.
    db.execute(&format!(
        "INSERT INTO destinations (id, region, url)
         SELECT 'd-' || lpad((i + (i - 1) / 99 + 1)::text, 8, '0'), 'us', 'https://idle.example.com/'
         FROM generate_series(1, {IDLE}) i
         ON CONFLICT DO NOTHING"
    ))
    .await;
    // The first measurement's rolled-back lease left dead versions on the
    // task pages; a vacuum gives the second the same room to update in.
    db.execute("VACUUM ANALYZE tasks, destinations, payloads")
        .await;
    let many = claim_buffers(&db).await;

    // A lookup of a destination by id may descend one more level of a
    // larger index: at most one buffer per destination the claim reaches,
    // and it reaches at most LIMIT of them.
    assert!(
        many <= few + LIMIT as u64 + 8,
        "{many} buffers with {IDLE} idle destinations, {few} without"
    );
}
