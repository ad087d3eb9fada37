//! What the tests that plan statements on a million rows share: filling a
//! schema in bulk, planning a prepared statement and checking the plan
//! (no sequential scan of a big table, an estimate a stock server does not
//! compile), and taking turns.

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// The server's default `jit_above_cost`: a plan estimated above it is
/// compiled by LLVM on a server where `jit = on`.
pub const JIT_ABOVE_COST: f64 = 100_000.0;

/// Held by each test that fills a table of a million rows and reads its
/// plans: a long fill elsewhere holds back the horizon VACUUM may mark
/// pages all-visible up to, so the other test's index-only plans would
/// turn into heap reads. They take turns instead.
pub static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The one payload row every filled task points at (only the foreign key
/// needs it).
pub const ONE_PAYLOAD: &str =
    "INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext) \
     VALUES ('00000000-0000-7000-8000-000000000000', 'application/json', '\\x00', '\\x00', '\\x00')";

/// Runs `rows` (the fill's statements) on `conn` in bulk: the foreign
/// keys' row-by-row checks off (a fill keeps them by construction), and
/// the indexes of `tasks` that are not unique dropped and built again
/// afterwards from their own definitions; then VACUUM (ANALYZE), as
/// autovacuum would after so many inserts (it also marks the pages
/// all-visible, which index-only reads need to stay off the heap).
/// Answers the names of the indexes it rebuilt.
pub async fn fill(conn: &mut AsyncPgConnection, rows: &[&str]) -> Vec<String> {
    #[derive(QueryableByName)]
    struct Def {
        #[diesel(sql_type = Text)]
        name: String,
        #[diesel(sql_type = Text)]
        def: String,
    }
    let defs: Vec<Def> = diesel::sql_query(
        "SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def \
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         WHERE i.indrelid = 'tasks'::regclass AND NOT i.indisunique",
    )
    .load(conn)
    .await
    .unwrap();
    let mut steps: Vec<String> = vec![
        "SET session_replication_role = replica".into(),
        "SET maintenance_work_mem = '256MB'".into(),
    ];
    steps.extend(defs.iter().map(|d| format!("DROP INDEX {}", d.name)));
    steps.extend(rows.iter().map(|s| (*s).to_owned()));
    steps.extend(defs.iter().map(|d| d.def.clone()));
    // The replica role also held back the triggers that keep the queue and
    // the end log: both are written here in one pass each instead.
    steps.extend(
        [
            "INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at, \
               not_before, ordering_key, retrying, retry_horizon_at) \
             SELECT id, region, destination_id, tenant_id, available_at, not_before, ordering_key, \
               state = 'retry_wait', retry_horizon_at \
             FROM tasks WHERE finalized_at IS NULL",
            "INSERT INTO task_ends (task_id, region, finalized_at) \
             SELECT id, region, finalized_at FROM tasks WHERE finalized_at IS NOT NULL",
        ]
        .map(String::from),
    );
    steps.push("RESET session_replication_role".into());
    steps.extend(
        [
            "VACUUM (ANALYZE) destinations",
            "VACUUM (ANALYZE) tasks",
            "VACUUM (ANALYZE) task_queue",
            "VACUUM (ANALYZE) task_ends",
            "VACUUM (ANALYZE) attempts",
        ]
        .map(String::from),
    );
    for sql in &steps {
        diesel::sql_query(sql.as_str())
            .execute(conn)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    vacuum_until_visible(conn, "task_queue").await;
    defs.into_iter().map(|d| d.name).collect()
}

/// VACUUM (ANALYZE) of `table` until it leaves no dead row behind and
/// every page is marked all-visible, as autovacuum would find it on a
/// quiet server. A transaction of another test open in the same database
/// holds back what VACUUM may clean (the dead rows stay in the indexes, and
/// index-only reads go to the heap), so it is run again until that one
/// has ended, for a minute at most.
pub async fn vacuum_until_visible(conn: &mut AsyncPgConnection, table: &str) {
    #[derive(QueryableByName)]
    struct Left {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        dead: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        hidden: i64,
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        diesel::sql_query(format!("VACUUM (ANALYZE) {table}"))
            .execute(conn)
            .await
            .unwrap();
        let left: Left = diesel::sql_query(format!(
            "SELECT coalesce(s.n_dead_tup, 0) AS dead,                     greatest(c.relpages - c.relallvisible, 0)::bigint AS hidden              FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid              WHERE c.oid = '{table}'::regclass"
        ))
        .get_result(conn)
        .await
        .unwrap();
        if (left.dead == 0 && left.hidden == 0) || std::time::Instant::now() > deadline {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The tables whose size is the history kept: a statement that reads one
/// from end to end costs more as history grows.
pub const HISTORY: &[&str] = &["tasks", "task_ends", "attempts", "payloads"];

/// The history and the queue of live work: the hot path reads neither from
/// end to end, since a claim reads in proportion to what it claims. (A
/// report over every live task reads the whole queue: that is what it
/// counts.)
pub const HOT_PATH: &[&str] = &["tasks", "task_ends", "attempts", "payloads", "task_queue"];

/// Every `Seq Scan` of one of `tables` in a JSON plan.
pub fn seq_scans(node: &serde_json::Value, tables: &[&str], found: &mut Vec<String>) {
    match node {
        serde_json::Value::Object(map) => {
            if map.get("Node Type").and_then(|t| t.as_str()) == Some("Seq Scan") {
                let relation = map
                    .get("Relation Name")
                    .and_then(|r| r.as_str())
                    .unwrap_or("");
                if tables.contains(&relation) {
                    found.push(relation.to_owned());
                }
            }
            map.values().for_each(|v| seq_scans(v, tables, found));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| seq_scans(v, tables, found)),
        _ => {}
    }
}

#[derive(QueryableByName)]
struct Plan {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    plan: String,
}

/// A statement to plan: its name in messages, its text, its parameters'
/// types and the values to run it with (SQL expressions).
pub struct Statement<'a> {
    pub name: &'a str,
    pub sql: &'a str,
    pub types: &'a str,
    pub args: &'a str,
}

/// Plans (and runs, inside a transaction rolled back) `statement`
/// prepared; fails on a sequential scan of a big table or an estimate at or
/// above [`JIT_ABOVE_COST`]. Answers the buffers it read.
pub async fn assert_cheap(conn: &mut AsyncPgConnection, statement: &Statement<'_>) -> u64 {
    let mut buffers = 0;
    // The plan for the values, with a stock server's settings (the plans
    // are right without the store's own), and the generic one a prepared
    // statement settles on in the store's sessions, which cannot see the
    // values.
    for (mode, seqscan, jit) in [
        ("force_custom_plan", "on", "on"),
        ("force_generic_plan", "off", "off"),
    ] {
        diesel::sql_query(format!(
            "SELECT set_config('plan_cache_mode', '{mode}', false), \
                    set_config('enable_seqscan', '{seqscan}', false), \
                    set_config('jit', '{jit}', false)"
        ))
        .execute(conn)
        .await
        .unwrap();
        buffers = planned(conn, mode, statement).await;
    }
    for setting in ["plan_cache_mode", "enable_seqscan", "jit"] {
        diesel::sql_query(format!("RESET {setting}"))
            .execute(conn)
            .await
            .unwrap();
    }
    buffers
}

/// One plan of [`assert_cheap`]'s, in plan cache mode `mode`, checked; the
/// buffers it read.
async fn planned(conn: &mut AsyncPgConnection, mode: &str, statement: &Statement<'_>) -> u64 {
    let Statement {
        sql, types, args, ..
    } = statement;
    let name = format!("{} ({mode})", statement.name);
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
    seq_scans(&json, HOT_PATH, &mut found);
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
