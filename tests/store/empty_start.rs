//! A plan settled on while the queue was empty, run once it is full.
//!
//! A prepared statement moves to a generic plan after a few runs and keeps
//! it until a table it reads is analyzed again. A process that starts on a
//! new install (or a drained queue) plans its claim on an empty
//! `task_queue`; then a bulk schedule fills the queue, and until autovacuum
//! next analyzes it (up to a minute, more when it is busy) every claim
//! runs the plan made for an empty table. Planned by the server's defaults
//! that plan read the whole queue at every step of the destination walk:
//! 4,097,022 buffers for one claim over 300,000 tasks, 12 s in the load
//! harness's first user's shape. A store's sessions plan without
//! sequential scans where an index serves (`PgConnector::for_store`), so
//! the claim's plan made on the empty table walks the indexes too. Next
//! due's did not (it read all of `task_queue_pkey` per destination, 3.8 s
//! here), so the store plans it at each call, as the server plans an
//! unnamed statement: with the table's size as it is then.

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use remit::store::hot_path_sql;

use crate::big_tables::{self, seq_scans};
use crate::support::TestDb;

const DESTINATIONS: usize = 200;
const TASKS: usize = 60_000;

/// The statements that walk the region's destinations, each with how the
/// store plans it, its parameters' types and the values it is run with.
fn walks() -> [(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
); 2] {
    [
        (
            "claim",
            "force_generic_plan",
            hot_path_sql::claim(),
            "timestamptz, text, text, bigint, int, int, text[], text, text, text[], int[]",
            "NULL, 'us', 'empty-start', 30000, 64, 16, '{}', '', '', '{}', '{}'",
        ),
        (
            "next_due",
            "force_custom_plan",
            hot_path_sql::NEXT_DUE,
            "timestamptz, text",
            "NULL, 'us'",
        ),
    ]
}

#[derive(QueryableByName)]
struct Plan {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    plan: String,
}

async fn run(conn: &mut AsyncPgConnection, sql: &str) {
    diesel::sql_query(sql)
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[tokio::test]
async fn a_plan_made_on_an_empty_queue_walks_the_indexes_once_the_queue_is_full() {
    let _turn = big_tables::TURN.lock().await;
    let db = TestDb::with_database_clock().await;
    let mut conn = db.conn().await;
    // No ANALYZE behind the test's back: it would replan the statements.
    for table in ["tasks", "task_queue", "destinations", "payloads"] {
        run(
            &mut conn,
            &format!("ALTER TABLE {table} SET (autovacuum_enabled = off)"),
        )
        .await;
    }
    for (name, mode, sql, types, args) in walks() {
        run(&mut conn, &format!("SET plan_cache_mode = {mode}")).await;
        run(&mut conn, &format!("PREPARE {name} ({types}) AS {sql}")).await;
        // The generic plan is made at the first run, on the empty tables.
        run(&mut conn, "BEGIN").await;
        run(&mut conn, &format!("EXECUTE {name} ({args})")).await;
        run(&mut conn, "ROLLBACK").await;
    }

    // A bulk schedule: every task due in the months ahead, so a claim has
    // every destination to walk and none to take from.
    run(
        &mut conn,
        &format!(
            "INSERT INTO destinations (id, region, url) \
             SELECT 'd' || g, 'us', 'http://127.0.0.1:9/h' FROM generate_series(1, {DESTINATIONS}) g"
        ),
    )
    .await;
    run(&mut conn, big_tables::ONE_PAYLOAD).await;
    run(
        &mut conn,
        &format!(
            "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, not_before, \
               available_at, retry_horizon_at, idempotency_key, payload_ref) \
             SELECT gen_random_uuid(), 'tenant-' || (g % 1000), 'r' || g, \
               'd' || (g % {DESTINATIONS} + 1), 'us', nb, nb, nb + interval '3 days', 'k' || g, \
               '00000000-0000-7000-8000-000000000000' \
             FROM generate_series(1, {TASKS}) g, \
               LATERAL (SELECT now() + interval '1 day' + (g % 300) * interval '1 day' AS nb) t"
        ),
    )
    .await;

    for (name, mode, _, _, args) in walks() {
        run(&mut conn, &format!("SET plan_cache_mode = {mode}")).await;
        run(&mut conn, "BEGIN").await;
        let explained: Plan = diesel::sql_query(format!(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE {name} ({args})"
        ))
        .get_result(&mut conn)
        .await
        .unwrap();
        run(&mut conn, "ROLLBACK").await;
        let json: serde_json::Value = serde_json::from_str(&explained.plan).unwrap();
        let top = &json[0]["Plan"];
        let buffers = top["Shared Hit Blocks"].as_u64().unwrap_or(0)
            + top["Shared Read Blocks"].as_u64().unwrap_or(0);
        eprintln!(
            "{name}, planned on an empty queue, over {TASKS} tasks: {buffers} buffers, {:.1} ms",
            json[0]["Execution Time"].as_f64().unwrap_or(0.0)
        );
        let mut found = Vec::new();
        seq_scans(&json, big_tables::HOT_PATH, &mut found);
        assert!(
            found.is_empty(),
            "{name}, planned on an empty queue, reads {found:?} from end to end:\n{}",
            explained.plan
        );
        // A few index descents per destination (about 20 buffers each at
        // most), not a pass over the queue (some 500 pages) per step.
        let bound = 40 * DESTINATIONS as u64;
        assert!(
            buffers < bound,
            "{name}, planned on an empty queue, read {buffers} buffers (bound {bound}):\n{}",
            explained.plan
        );
    }
}
