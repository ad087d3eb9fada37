//! The hot path's statements on a table in the first user's shape: a
//! million reminders over 10,000 tenants and 1,000 destinations, most of
//! them ended, many due in the months ahead, a thousand due now, and some
//! ordering lines; and one busy destination where 20,000 tenants have a
//! reminder due tomorrow beside 5,000 due now. Each statement is the store's own, planned as the store
//! prepares it: no plan reads `tasks`, `attempts` or `payloads` from end to
//! end (a `Seq Scan`), and the planner's estimate stays below the server's
//! default `jit_above_cost` (100,000), so a stock server with `jit = on`
//! never compiles it. Times and buffers are printed (`--nocapture`), not
//! asserted: they depend on the machine.

use std::time::Instant;

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::big_tables::{self, seq_scans};
use crate::support::TestDb;

/// The server's default `jit_above_cost`: a plan estimated above it is
/// compiled by LLVM on a server where `jit = on`.
const JIT_ABOVE_COST: f64 = 100_000.0;

/// A million tasks of region `us`: 70 % delivered over the last month, 1 %
/// failed, 28.9 % pending and due over the next year, and 1,000 (0.1 %)
/// due now; every hundredth in one of 500 ordering lines. One payload row
/// serves them all.
const FILL: &[&str] = &[
    "INSERT INTO destinations (id, region, url) \
     SELECT 'd' || g, 'us', 'http://127.0.0.1:9/h' FROM generate_series(1, 1000) g",
    big_tables::ONE_PAYLOAD,
    "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, not_before, \
       available_at, retry_horizon_at, idempotency_key, payload_ref, failure_reason, \
       delivered_at, finalized_at, attempt_count, ordering_key) \
     SELECT (lpad(to_hex(g), 12, '0') || '70008000' || lpad(to_hex(g), 12, '0'))::uuid, \
       'tenant-' || (g % 10000), 'r' || g, 'd' || (g % 1000 + 1), 'us', \
       (CASE WHEN kind < 70 THEN 'delivered' WHEN kind = 70 THEN 'failed' ELSE 'pending' END)::task_state, \
       nb, nb, nb + interval '3 days', 'k' || g, '00000000-0000-7000-8000-000000000000', \
       CASE WHEN kind = 70 THEN 'max_attempts' END, \
       CASE WHEN kind < 70 THEN nb + interval '1 second' END, \
       CASE WHEN kind <= 70 THEN nb + interval '1 second' END, \
       CASE WHEN kind <= 70 THEN 1 ELSE 0 END, \
       CASE WHEN g % 100 = 0 THEN 'line-' || (g % 500) END \
     FROM generate_series(1, 1000000) g, \
       LATERAL (SELECT g % 100 AS kind) k, \
       LATERAL (SELECT CASE \
           WHEN k.kind <= 70 THEN now() - interval '30 days' + g * interval '2 seconds' \
           WHEN g % 997 = 0 THEN now() - interval '1 minute' \
           ELSE now() + interval '1 hour' + (g % 365) * interval '1 day' END AS nb) t",
    // One busy destination: 20,000 tenants with a reminder due tomorrow
    // beside 5,000 due now for 50 tenants.
    "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, not_before, \
       available_at, retry_horizon_at, idempotency_key, payload_ref) \
     SELECT (lpad(to_hex(g), 12, '0') || '70008000' || lpad(to_hex(g), 12, '0'))::uuid, \
       CASE WHEN g <= 3020000 THEN 'later-' || g ELSE 'busy-' || (g % 50) END, 'r' || g, 'd1', 'us', \
       'pending', nb, nb, nb + interval '3 days', 'k' || g, '00000000-0000-7000-8000-000000000000' \
     FROM generate_series(3000001, 3025000) g, \
       LATERAL (SELECT CASE WHEN g <= 3020000 THEN now() + interval '1 day' \
                            ELSE now() - interval '1 minute' END AS nb) t",
];

#[derive(QueryableByName)]
struct Plan {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    plan: String,
}

/// Plans (and runs, inside a transaction rolled back) the prepared
/// statement `sql` with `args`; fails on a sequential scan of a big table
/// or an estimate at or above [`JIT_ABOVE_COST`]. Answers the buffers it
/// read.
async fn assert_cheap(
    conn: &mut AsyncPgConnection,
    name: &str,
    sql: &str,
    types: &str,
    args: &str,
) -> u64 {
    let mut buffers = 0;
    // The plan for the values, and the generic one a prepared statement may
    // settle on after five runs, which cannot see them.
    for mode in ["force_custom_plan", "force_generic_plan"] {
        diesel::sql_query(format!("SET plan_cache_mode = {mode}"))
            .execute(conn)
            .await
            .unwrap();
        buffers = planned(conn, &format!("{name} ({mode})"), sql, types, args).await;
    }
    diesel::sql_query("RESET plan_cache_mode")
        .execute(conn)
        .await
        .unwrap();
    buffers
}

/// One plan of [`assert_cheap`]'s, checked; the buffers it read.
async fn planned(
    conn: &mut AsyncPgConnection,
    name: &str,
    sql: &str,
    types: &str,
    args: &str,
) -> u64 {
    let run = |sql: String| diesel::sql_query(sql);
    run("BEGIN".into()).execute(conn).await.unwrap();
    run(format!("PREPARE q ({types}) AS {sql}"))
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let explained: Plan = run(format!(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE q ({args})"
    ))
    .get_result(conn)
    .await
    .unwrap();
    run("ROLLBACK".into()).execute(conn).await.unwrap();
    run("DEALLOCATE q".into()).execute(conn).await.unwrap();
    let json: serde_json::Value = serde_json::from_str(&explained.plan).unwrap();
    if let Ok(dir) = std::env::var("REMIT_PLANS_DIR") {
        std::fs::write(format!("{dir}/{name}.json"), &explained.plan).unwrap();
    }
    let top = &json[0]["Plan"];
    let cost = top["Total Cost"].as_f64().unwrap();
    let buffers = top["Shared Hit Blocks"].as_u64().unwrap_or(0)
        + top["Shared Read Blocks"].as_u64().unwrap_or(0);
    eprintln!(
        "{name}: estimated cost {cost:.0}, {:.1} ms, {buffers} buffers, {} rows",
        json[0]["Execution Time"].as_f64().unwrap_or(0.0),
        top["Actual Rows"]
    );
    let mut found = Vec::new();
    seq_scans(&json, &mut found);
    assert!(
        found.is_empty(),
        "{name} reads {found:?} from end to end:\n{}",
        explained.plan
    );
    assert!(
        cost < JIT_ABOVE_COST,
        "{name} is estimated at {cost:.0}, which a server with jit = on compiles:\n{}",
        explained.plan
    );
    buffers
}

#[tokio::test]
async fn the_claim_is_cheap_on_a_million_reminders_in_the_first_users_shape() {
    let _turn = big_tables::TURN.lock().await;
    let db = TestDb::with_database_clock().await;
    let mut conn = db.conn().await;
    let started = Instant::now();
    big_tables::fill(&mut conn, FILL).await;
    eprintln!("filled in {:?}", started.elapsed());
    let from_the_start = assert_cheap(
        &mut conn,
        "claim",
        include_str!("../../src/store/postgres/claim.sql"),
        "timestamptz, text, text, bigint, int, int, text[], text, text",
        "NULL, 'us', 'plans', 30000, 64, 16, '{}', '', ''",
    )
    .await;
    // The turn over the busy destination's tenants resuming past its last
    // busy tenant: next in byte order come the 20,000 with nothing due.
    // They cost a range of index entries, not a probe each (which read
    // about 124,000 buffers here).
    let past_idle_tenants = assert_cheap(
        &mut conn,
        "claim resuming before idle tenants",
        include_str!("../../src/store/postgres/claim.sql"),
        "timestamptz, text, text, bigint, int, int, text[], text, text",
        "NULL, 'us', 'plans', 30000, 64, 16, '{}', '', 'busy-9'",
    )
    .await;
    assert!(
        past_idle_tenants < 2 * from_the_start,
        "stepping past 20,000 tenants with nothing due read {past_idle_tenants} buffers, \
         {from_the_start} from the start"
    );
}

/// A drain under way: 300,000 tasks due now over 50 destinations and 1,000
/// tenants, enqueued and analyzed, and then about a third of them
/// delivered.
const DRAIN: &[&str] = &[
    "INSERT INTO destinations (id, region, url) \
     SELECT 'd' || g, 'us', 'http://127.0.0.1:9/h' FROM generate_series(1, 50) g",
    big_tables::ONE_PAYLOAD,
    "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, not_before, \
       available_at, retry_horizon_at, idempotency_key, payload_ref, delivered_at, finalized_at, \
       attempt_count) \
     SELECT (lpad(to_hex(g), 12, '0') || '70008000' || lpad(to_hex(g), 12, '0'))::uuid, \
       'tenant-' || (g % 1000), 'r' || g, 'd' || (g % 50 + 1), 'us', \
       'pending', now() - interval '1 hour', now() - interval '1 hour', \
       now() + interval '3 days', 'k' || g, '00000000-0000-7000-8000-000000000000', \
       NULL, NULL, 0 \
     FROM generate_series(1, 300000) g",
];

/// A third of the drain delivered since the table was last analyzed, as
/// in service: the statistics describe the backlog as it was enqueued.
const DRAINED: &str = "UPDATE tasks SET state = 'delivered', delivered_at = now(), \
     finalized_at = now(), attempt_count = 1 WHERE reminder_id::text < 'r4'";

#[tokio::test]
async fn the_claim_is_cheap_in_a_long_drain() {
    let _turn = big_tables::TURN.lock().await;
    let db = TestDb::with_database_clock().await;
    let mut conn = db.conn().await;
    big_tables::fill(&mut conn, DRAIN).await;
    diesel::sql_query(DRAINED).execute(&mut conn).await.unwrap();
    assert_cheap(
        &mut conn,
        "claim in a drain",
        include_str!("../../src/store/postgres/claim.sql"),
        "timestamptz, text, text, bigint, int, int, text[], text, text",
        "NULL, 'us', 'plans', 30000, 64, 16, '{}', '', ''",
    )
    .await;
}
