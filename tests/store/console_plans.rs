//! The console's queries use the indexes on a million tasks: each is
//! planned (`EXPLAIN (FORMAT JSON)`) on a schema filled in SQL, and no plan
//! reads `tasks` or `attempts` from end to end (a `Seq Scan`). The
//! statements are the store's own (`remit::store::console_sql`), prepared
//! and executed with values as the store binds them.

use std::time::Instant;

use chrono::Duration;
use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use remit::domain::{DestinationId, Region, ReminderId, TaskId, TaskState, TenantId};
use remit::store::console::TaskFilter;
use remit::store::console_sql;

use crate::support::TestDb;

const TASKS: i64 = 1_000_000;

/// A million tasks of region `eu` over 50 destinations and 1,000 tenants:
/// 94 % delivered, 5 % pending, 1 % failed, spread over the last eleven
/// days; an attempt for every tenth, a 429 for every hundredth. Ids are
/// time-ordered like the store's. One payload row serves them all (only
/// the foreign key needs it).
const FILL: &[&str] = &[
    "INSERT INTO destinations (id, region, url) \
     SELECT 'd' || g, 'eu', 'http://127.0.0.1:9/h' FROM generate_series(1, 50) g",
    "INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext) \
     VALUES ('00000000-0000-7000-8000-000000000000', 'application/json', '\\x00', '\\x00', '\\x00')",
    "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, not_before, \
       available_at, retry_horizon_at, idempotency_key, payload_ref, failure_reason, \
       delivered_at, finalized_at, attempt_count) \
     SELECT (lpad(to_hex(g), 12, '0') || '70008000' || lpad(to_hex(g), 12, '0'))::uuid, \
       'tenant-' || (g % 1000), 'r' || g, 'd' || (g % 50 + 1), 'eu', \
       (CASE WHEN g % 100 = 0 THEN 'failed' WHEN g % 20 = 1 THEN 'pending' ELSE 'delivered' END)::task_state, \
       nb, nb, nb + interval '3 days', 'k' || g, '00000000-0000-7000-8000-000000000000', \
       CASE WHEN g % 100 = 0 THEN 'max_attempts' END, \
       CASE WHEN g % 100 <> 0 AND g % 20 <> 1 THEN nb + interval '1 second' END, \
       CASE WHEN g % 100 = 0 OR g % 20 <> 1 THEN nb + interval '1 second' END, \
       CASE WHEN g % 20 = 1 THEN 0 ELSE 1 END \
     FROM generate_series(1, 1000000) g, \
       LATERAL (SELECT now() - (1000000 - g) * interval '1 second' AS nb) t",
    "INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, outcome, \
       http_status, recorded_at) \
     SELECT id, 1, 1, 'fill', 'delivered', CASE WHEN random() < 0.1 THEN 429 ELSE 200 END, \
       not_before + interval '1 second' \
     FROM tasks WHERE reminder_id LIKE '%0'",
];

/// Every `Seq Scan` of `tasks` or `attempts` in a JSON plan.
fn seq_scans(node: &serde_json::Value, found: &mut Vec<String>) {
    match node {
        serde_json::Value::Object(map) => {
            if map.get("Node Type").and_then(|t| t.as_str()) == Some("Seq Scan") {
                let relation = map
                    .get("Relation Name")
                    .and_then(|r| r.as_str())
                    .unwrap_or("");
                if relation == "tasks" || relation == "attempts" {
                    found.push(relation.to_owned());
                }
            }
            map.values().for_each(|v| seq_scans(v, found));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| seq_scans(v, found)),
        _ => {}
    }
}

/// Plans `sql` with `args` (SQL literals) and fails on a sequential scan.
async fn assert_indexed(conn: &mut AsyncPgConnection, name: &str, sql: &str, args: &[String]) {
    diesel::sql_query(format!("PREPARE q AS {sql}"))
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}\n{sql}"));
    let explain = if args.is_empty() {
        "EXPLAIN (FORMAT JSON) EXECUTE q".to_owned()
    } else {
        format!("EXPLAIN (FORMAT JSON) EXECUTE q({})", args.join(", "))
    };
    let plan = explain_rows(conn, &explain).await;
    diesel::sql_query("DEALLOCATE q")
        .execute(conn)
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&plan).unwrap();
    let mut found = Vec::new();
    seq_scans(&json, &mut found);
    assert!(
        found.is_empty(),
        "{name} reads {found:?} from end to end:\n{plan}"
    );
}

/// EXPLAIN's answer is a row with one column named `QUERY PLAN`.
async fn explain_rows(conn: &mut AsyncPgConnection, explain: &str) -> String {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        #[diesel(column_name = "QUERY PLAN")]
        plan: String,
    }
    let rows: Vec<Row> = diesel::sql_query(explain).load(conn).await.unwrap();
    rows.into_iter().map(|r| r.plan).collect()
}

fn search(filter: TaskFilter) -> (String, Vec<String>) {
    let (sql, params) = console_sql::search_tasks(Region::EU, &filter, None, 51);
    (sql, params.iter().map(|p| p.literal()).collect())
}

#[tokio::test]
async fn console_queries_use_indexes_on_a_million_tasks() {
    let db = TestDb::new().await;
    let mut conn = db.conn().await;
    let started = Instant::now();
    // Faster in bulk: the foreign keys' row-by-row checks off (the fill
    // keeps them by construction), and the indexes that are not unique
    // dropped and built again afterwards, from their own definitions.
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
    .load(&mut conn)
    .await
    .unwrap();
    assert!(
        defs.iter().any(|d| d.name == "tasks_failed"),
        "the console's indexes are there"
    );
    let mut steps: Vec<String> = vec![
        "SET session_replication_role = replica".into(),
        "SET maintenance_work_mem = '256MB'".into(),
    ];
    steps.extend(defs.iter().map(|d| format!("DROP INDEX {}", d.name)));
    steps.extend(FILL.iter().map(|s| (*s).to_owned()));
    steps.extend(defs.iter().map(|d| d.def.clone()));
    steps.push("RESET session_replication_role".into());
    steps.extend(["ANALYZE destinations", "ANALYZE tasks", "ANALYZE attempts"].map(String::from));
    for sql in &steps {
        diesel::sql_query(sql.as_str())
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    eprintln!("filled {TASKS} tasks in {:?}", started.elapsed());

    let id = TaskId(uuid::Uuid::parse_str("00000000-1234-7000-8000-000000001234").unwrap());
    let now = chrono::Utc::now();
    let searches = [
        (
            "search by id",
            TaskFilter {
                id: Some(id),
                ..TaskFilter::default()
            },
        ),
        (
            "search by tenant",
            TaskFilter {
                tenant: Some(TenantId::new("tenant-7").unwrap()),
                ..TaskFilter::default()
            },
        ),
        (
            "search by tenant and reminder",
            TaskFilter {
                tenant: Some(TenantId::new("tenant-7").unwrap()),
                reminder: Some(ReminderId::new("r4007").unwrap()),
                ..TaskFilter::default()
            },
        ),
        (
            "search by destination",
            TaskFilter {
                destination: Some(DestinationId::new("d7").unwrap()),
                ..TaskFilter::default()
            },
        ),
        (
            "search by state failed",
            TaskFilter {
                state: Some(TaskState::Failed),
                ..TaskFilter::default()
            },
        ),
        (
            "search by time range",
            TaskFilter {
                from: Some(now - Duration::days(3)),
                until: Some(now - Duration::days(3) + Duration::hours(1)),
                ..TaskFilter::default()
            },
        ),
        (
            "search by a limited token's tenants",
            TaskFilter {
                only_tenants: Some(vec![
                    TenantId::new("tenant-7").unwrap(),
                    TenantId::new("tenant-8").unwrap(),
                ]),
                ..TaskFilter::default()
            },
        ),
    ];
    for (name, filter) in searches {
        let (sql, args) = search(filter);
        assert_indexed(&mut conn, name, &sql, &args).await;
    }
    let region = ["NULL".to_owned(), "'eu'".to_owned()];
    assert_indexed(
        &mut conn,
        "destination summaries",
        console_sql::DESTINATION_SUMMARIES,
        &region,
    )
    .await;
    assert_indexed(
        &mut conn,
        "activity: ended",
        console_sql::ACTIVITY_ENDED,
        &region,
    )
    .await;
    assert_indexed(
        &mut conn,
        "activity: 429s",
        console_sql::ACTIVITY_RATE_LIMITED,
        &region,
    )
    .await;
    assert_indexed(
        &mut conn,
        "activity: failures",
        console_sql::ACTIVITY_FAILURES,
        &region,
    )
    .await;
    let batch = [
        "'eu'",
        "'00000000-0000-0000-0000-000000000000'::uuid",
        "now()",
        "NULL",
        "NULL",
        "NULL",
        "'max_attempts'",
        "NULL",
        "NULL",
        "200",
        "21600000",
        "NULL",
    ]
    .map(str::to_owned);
    assert_indexed(
        &mut conn,
        "bulk replay batch",
        console_sql::REPLAY_BATCH,
        &batch,
    )
    .await;
    eprintln!("filled and planned in {:?}", started.elapsed());
}
