//! What a claim reads does not grow with destinations that have no live
//! work: measured with EXPLAIN (ANALYZE, BUFFERS) of the store's own claim
//! statement, before and after registering many idle destinations whose
//! ids fall between the busy ones (a walk over the region's destinations in
//! id order would have to step over every one of them), and likewise with
//! many tenants that have nothing live at the busy destinations (a turn
//! over a destination's tenants steps only on tenants with live rows
//! there).

use diesel::sql_types::Text;
use diesel::QueryableByName;

use crate::support::TestDb;
use remit::store::hot_path_sql;

/// Busy destinations, each with one due task.
const BUSY: usize = 500;
/// Idle destinations registered afterwards.
const IDLE: usize = 50_000;
/// The claim's limit, as the runtime's default claims.
pub(crate) const LIMIT: i64 = 64;

#[derive(QueryableByName)]
struct Plan {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    plan: String,
}

/// The plan of a claim of up to `LIMIT` rows of region `us` by statement
/// `sql` (the store's, or a variant of it), as EXPLAIN (ANALYZE, BUFFERS,
/// FORMAT JSON) shows it, run inside a transaction that is rolled back, so
/// the rows stay as they were.
pub(crate) async fn explain_claim(db: &TestDb, sql: &str) -> serde_json::Value {
    use diesel_async::RunQueryDsl;
    let mut conn = db.conn().await;
    let run = |sql: String| diesel::sql_query(sql);
    run("BEGIN".into()).execute(&mut conn).await.unwrap();
    run(format!(
        "PREPARE measured_claim (timestamptz, text, text, bigint, int, int, text[], text, text, text[], int[]) AS {sql}"
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    let explained: Plan = run(format!(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
         EXECUTE measured_claim (NULL, 'us', 'cost', 30000, {LIMIT}, 16, '{{}}', '', '', '{{}}', '{{}}')"
    ))
    .get_result(&mut conn)
    .await
    .unwrap();
    run("ROLLBACK".into()).execute(&mut conn).await.unwrap();
    serde_json::from_str(&explained.plan).unwrap()
}

/// Buffers (hit or read) the store's claim touches.
async fn claim_buffers(db: &TestDb) -> u64 {
    claim_plan(db).await.0
}

/// The store's claim's buffers, and those of its turn over the
/// destinations' tenants (the `tenant_walk` step).
async fn claim_plan(db: &TestDb) -> (u64, u64) {
    let json = explain_claim(db, hot_path_sql::claim()).await;
    let top = &json[0]["Plan"];
    let claimed = top["Actual Rows"].as_u64().unwrap();
    assert_eq!(claimed, LIMIT as u64, "the claim leased a full batch");
    let walk = top["Plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["Subplan Name"] == "CTE tenant_walk")
        .expect("the plan has the tenant walk");
    (buffers(top), buffers(walk))
}

fn buffers(node: &serde_json::Value) -> u64 {
    node["Shared Hit Blocks"].as_u64().unwrap() + node["Shared Read Blocks"].as_u64().unwrap()
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
    db.execute("VACUUM ANALYZE tasks, task_queue, destinations, payloads")
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
    db.execute("VACUUM ANALYZE tasks, task_queue, destinations, payloads")
        .await;
    let many = claim_buffers(&db).await;

    // A lookup of a destination by id may descend one more level of a
    // larger index: at most one buffer per destination the claim reaches,
    // and it reaches at most LIMIT of them. As many again for heap pages
    // a vacuum could not mark all-visible while another session's snapshot
    // was open (the suite runs beside other tests). A walk over the idle
    // destinations in id order reads their index's 150-odd leaf pages and
    // the heap pages behind them: several hundred more.
    assert!(
        many <= few + 2 * LIMIT as u64 + 8,
        "{many} buffers with {IDLE} idle destinations, {few} without"
    );
}

/// Tenants of the busy destinations, each with due work at every one.
const BUSY_TENANTS: usize = 4;
/// Tenants with nothing live at the busy destinations, registered before
/// the first measurement and again before the second.
const IDLE_TENANTS: usize = 20_000;

/// Inserts one task per row of `rows_sql`, which names its `tenant`,
/// `destination`, `region` and `state` ('pending' or 'delivered').
async fn insert_tasks(db: &TestDb, rows_sql: &str, n: usize) {
    db.execute(&format!(
        "WITH p AS (
             INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext)
             SELECT gen_random_uuid(), 'application/json', '\\x00', '\\x00', '\\x00'
             FROM generate_series(1, {n})
             RETURNING payload_ref),
         numbered AS (SELECT payload_ref, row_number() OVER () AS i FROM p),
         wanted AS ({rows_sql})
         INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, not_before,
                            available_at, retry_horizon_at, idempotency_key, payload_ref,
                            delivered_at, finalized_at)
         SELECT gen_random_uuid(), w.tenant, 'r-' || n.i, w.destination, w.region, w.state::task_state,
                now() - interval '1 minute', now() - interval '1 minute', now() + interval '1 day',
                'msg_' || n.payload_ref, n.payload_ref,
                CASE WHEN w.state = 'delivered' THEN now() END,
                CASE WHEN w.state = 'delivered' THEN now() END
         FROM numbered n JOIN (SELECT *, row_number() OVER () AS i FROM wanted) w ON w.i = n.i"
    ))
    .await;
}

/// Tenants with nothing live at the busy destinations: each has a delivered
/// task at one of them and a due one in another region, so a turn over
/// the busy destinations' tenants must not step on them.
async fn idle_tenants(db: &TestDb, prefix: &str) {
    insert_tasks(
        db,
        &format!(
            "SELECT '{prefix}' || lpad(i::text, 8, '0') || '-idle' AS tenant, 'busy-1' AS destination,
                    'us' AS region, 'delivered' AS state
             FROM generate_series(1, {IDLE_TENANTS}) i
             UNION ALL
             SELECT '{prefix}' || lpad(i::text, 8, '0') || '-idle', 'elsewhere', 'eu', 'pending'
             FROM generate_series(1, {IDLE_TENANTS}) i"
        ),
        2 * IDLE_TENANTS,
    )
    .await;
}

#[tokio::test]
async fn a_claim_reads_no_more_with_many_tenants_without_live_work_at_a_destination() {
    let db = TestDb::with_database_clock().await;
    db.execute(
        "INSERT INTO destinations (id, region, url)
         SELECT 'busy-' || d, 'us', 'https://hooks.example.com/' || d FROM generate_series(1, 4) d",
    )
    .await;
    db.execute(
        "INSERT INTO destinations (id, region, url)
         VALUES ('elsewhere', 'eu', 'https://eu.example.com/')",
    )
    .await;
    // Every busy tenant has 20 due tasks at each busy destination: each
    // destination's share of the claim (16) splits between its 4 tenants.
    let busy = 4 * BUSY_TENANTS * 20;
    insert_tasks(
        &db,
        &format!(
            "SELECT 't-' || lpad((t * 100)::text, 8, '0') AS tenant, 'busy-' || d AS destination,
                    'us' AS region, 'pending' AS state
             FROM generate_series(1, 4) d, generate_series(1, {BUSY_TENANTS}) t,
                  generate_series(1, 20) k"
        ),
        busy,
    )
    .await;
    // Both measurements see a table of about the same size (an index one
    // level deeper would cost a buffer per lookup): as many other tenants
    // to begin with, whose ids sort after the busy ones.
    idle_tenants(&db, "z-").await;
    db.execute("VACUUM ANALYZE tasks, task_queue, destinations, payloads")
        .await;
    let (few, walk_few) = claim_plan(&db).await;

    // Tenants whose ids lie between the busy ones ('t-00000150-idle' sorts
    // between 't-00000100' and 't-00000200').
    idle_tenants(&db, "t-").await;
    db.execute("VACUUM ANALYZE tasks, task_queue, destinations, payloads")
        .await;
    let (many, walk_many) = claim_plan(&db).await;

    // The turn over the tenants never stepped on the new tenants: it reads
    // what it read before but for the task rows it checks, one lookup by
    // primary key per tenant it takes, whose index may be a level deeper in
    // the larger table (stepping on 20,000 tenants would cost thousands).
    // The claim as a whole may likewise read a few more for the lookups it
    // makes per row leased: in the queue's indexes and the tasks' primary
    // key (the row read, checked again when locked, updated), and the
    // payload, each of which may be a level deeper now.
    assert!(
        walk_many <= walk_few + LIMIT as u64,
        "the tenant walk read {walk_many} buffers with {IDLE_TENANTS} more idle tenants between \
         the busy ones, {walk_few} without"
    );
    assert!(
        many <= few + 10 * LIMIT as u64,
        "{many} buffers with {IDLE_TENANTS} more idle tenants between the busy ones, {few} without"
    );
}
