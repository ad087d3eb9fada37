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
//!
//! Both walks are also planned at the run by a stock server's settings
//! (`enable_seqscan` and `jit` on), on the statistics of the empty queue
//! (analyzed while empty, as a drained queue is): each walks the indexes
//! without the store's settings too.

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use remit::store::hot_path_sql;

use crate::big_tables::{self, seq_scans};
use crate::support::TestDb;

const DESTINATIONS: usize = 200;
const TASKS: usize = 60_000;

/// A statement that walks the region's destinations, as one kind of
/// session runs it.
struct Walk {
    name: &'static str,
    /// How it is planned: once (a store's own session) or at each run.
    mode: &'static str,
    /// `enable_seqscan` (and `jit`) in that session: off where the store
    /// asks for it, on as a stock server has it.
    seqscan: &'static str,
    sql: &'static str,
    types: &'static str,
    args: &'static str,
}

const CLAIM_TYPES: &str =
    "timestamptz, text, text, bigint, int, int, text[], text, text, text[], int[]";
const CLAIM_ARGS: &str = "NULL, 'us', 'empty-start', 30000, 64, 16, '{}', '', '', '{}', '{}'";

/// The statements that walk the region's destinations: in a store's own
/// session, and planned at each run by a stock server's settings.
fn walks() -> [Walk; 4] {
    [
        Walk {
            name: "claim",
            mode: "force_generic_plan",
            seqscan: "off",
            sql: hot_path_sql::claim(),
            types: CLAIM_TYPES,
            args: CLAIM_ARGS,
        },
        Walk {
            name: "next_due",
            mode: "force_custom_plan",
            seqscan: "off",
            sql: hot_path_sql::NEXT_DUE,
            types: "timestamptz, text",
            args: "NULL, 'us'",
        },
        Walk {
            name: "claim_on_stock_settings",
            mode: "force_custom_plan",
            seqscan: "on",
            sql: hot_path_sql::claim(),
            types: CLAIM_TYPES,
            args: CLAIM_ARGS,
        },
        Walk {
            name: "next_due_on_stock_settings",
            mode: "force_custom_plan",
            seqscan: "on",
            sql: hot_path_sql::NEXT_DUE,
            types: "timestamptz, text",
            args: "NULL, 'us'",
        },
    ]
}

/// Sets the session `walk` is run in.
async fn session_of(conn: &mut AsyncPgConnection, walk: &Walk) {
    run(
        conn,
        &format!(
            "SELECT set_config('plan_cache_mode', '{}', false), \
                    set_config('enable_seqscan', '{}', false), set_config('jit', '{}', false)",
            walk.mode, walk.seqscan, walk.seqscan
        ),
    )
    .await;
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
        // As a drained queue is left: analyzed while empty.
        run(&mut conn, &format!("ANALYZE {table}")).await;
    }
    for walk in walks() {
        let Walk {
            name,
            sql,
            types,
            args,
            ..
        } = walk;
        session_of(&mut conn, &walk).await;
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

    for walk in walks() {
        let Walk { name, args, .. } = walk;
        session_of(&mut conn, &walk).await;
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
