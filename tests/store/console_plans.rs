//! The console's queries use the indexes on a million tasks: each is
//! planned (`EXPLAIN (FORMAT JSON)`) on a schema filled in SQL, and no plan
//! reads `tasks` or `attempts` from end to end (a `Seq Scan`). The
//! statements are the store's own (`remit::store::console_sql` and
//! `status_sql`), prepared and executed with values as the store binds
//! them. Each read's time is printed (`--nocapture`), not asserted: it
//! depends on the machine.

use std::time::Instant;

use chrono::Duration;
use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use remit::domain::{DestinationId, Region, ReminderId, TaskId, TaskState, TenantId};
use remit::store::console::TaskFilter;
use remit::store::Reports;
use remit::store::{console_sql, status_sql};

use crate::big_tables::{self, seq_scans};
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
    big_tables::ONE_PAYLOAD,
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

/// Plans `sql` with `args` (SQL literals) and fails on a sequential scan.
/// Planned with a stock server's settings (`enable_seqscan` and `jit` on):
/// the plans are right without the store's own.
async fn assert_indexed(conn: &mut AsyncPgConnection, name: &str, sql: &str, args: &[String]) {
    diesel::sql_query(
        "SELECT set_config('enable_seqscan', 'on', false), set_config('jit', 'on', false)",
    )
    .execute(conn)
    .await
    .unwrap();
    diesel::sql_query(format!("PREPARE q AS {sql}"))
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}\n{sql}"));
    // A read is run too (ANALYZE), for its time; the bulk replay's batch,
    // which writes, only planned.
    let options = if sql.contains("UPDATE") {
        "FORMAT JSON"
    } else {
        "ANALYZE, FORMAT JSON"
    };
    let explain = if args.is_empty() {
        format!("EXPLAIN ({options}) EXECUTE q")
    } else {
        format!("EXPLAIN ({options}) EXECUTE q({})", args.join(", "))
    };
    let plan = explain_rows(conn, &explain).await;
    for statement in ["DEALLOCATE q", "RESET enable_seqscan", "RESET jit"] {
        diesel::sql_query(statement).execute(conn).await.unwrap();
    }
    let json: serde_json::Value = serde_json::from_str(&plan).unwrap();
    let mut found = Vec::new();
    seq_scans(&json, big_tables::HISTORY, &mut found);
    assert!(
        found.is_empty(),
        "{name} reads {found:?} from end to end:\n{plan}"
    );
    // Printed, not asserted: the time depends on the machine and its load.
    if let Some(ms) = json[0]["Execution Time"].as_f64() {
        eprintln!("{name}: {ms:.1} ms");
    }
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
    let _turn = big_tables::TURN.lock().await;
    // The database's clock, as the fill's times are the database's now:
    // the report's last-hour and last-day windows then hold what they
    // would in service.
    let db = TestDb::with_database_clock().await;
    let mut conn = db.conn().await;
    let started = Instant::now();
    let rebuilt = big_tables::fill(&mut conn, FILL).await;
    assert!(
        rebuilt.iter().any(|name| name == "tasks_failed"),
        "the console's indexes are there"
    );
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
    // `status` (the console's overview and `remit status`), for a region
    // and for all of them.
    let all = ["NULL".to_owned(), "NULL".to_owned()];
    for (name, args) in [("", &region), (", all regions", &all)] {
        assert_indexed(
            &mut conn,
            &format!("status: live{name}"),
            status_sql::STATUS_LIVE,
            args,
        )
        .await;
        assert_indexed(
            &mut conn,
            &format!("status: ended{name}"),
            status_sql::STATUS_ENDED,
            &args[1..],
        )
        .await;
        let with_top = [args[0].clone(), args[1].clone(), "10".to_owned()];
        assert_indexed(
            &mut conn,
            &format!("status: top 429s{name}"),
            status_sql::TOP_RATE_LIMITED,
            &with_top,
        )
        .await;
        assert_indexed(
            &mut conn,
            &format!("status: failures{name}"),
            status_sql::FAILURES,
            args,
        )
        .await;
        assert_indexed(
            &mut conn,
            &format!("status: latency{name}"),
            status_sql::LATENCY,
            args,
        )
        .await;
    }
    // The whole report as `remit status` and the overview read it, through
    // the store (a debug build's decoding included), with the fill's counts.
    for only in [Some(Region::EU), None] {
        let started = Instant::now();
        let report = db.store.status(only).await.unwrap();
        eprintln!(
            "status report ({}): {:.1} ms",
            only.map_or("all regions".to_owned(), |r| r.to_string()),
            started.elapsed().as_secs_f64() * 1e3
        );
        let [eu] = report.regions.as_slice() else {
            panic!("one region: {:?}", report.regions);
        };
        assert_eq!(
            (
                eu.pending,
                eu.leased,
                eu.retry_wait,
                eu.delivered,
                eu.failed
            ),
            (TASKS / 20, 0, 0, TASKS * 94 / 100, TASKS / 100),
            "the fill's counts"
        );
    }
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
    // A bulk cancel's batch, by each field alone (the reminder needs no
    // tenant here: the walk is the queue's, by task id).
    for (name, filter) in [
        ("tenant", ["'tenant-7'", "NULL", "NULL", "NULL", "NULL"]),
        ("reminder", ["NULL", "'r21'", "NULL", "NULL", "NULL"]),
        ("destination", ["NULL", "NULL", "'d8'", "NULL", "NULL"]),
        (
            "time range",
            [
                "NULL",
                "NULL",
                "NULL",
                "now() - interval '2 days'",
                "now() - interval '1 day'",
            ],
        ),
    ] {
        let mut batch = vec![
            "'eu'".to_owned(),
            "'00000000-0000-0000-0000-000000000000'::uuid".to_owned(),
            "now()".to_owned(),
        ];
        batch.extend(filter.map(str::to_owned));
        batch.push("200".to_owned());
        assert_indexed(
            &mut conn,
            &format!("bulk cancel batch by {name}"),
            console_sql::CANCEL_BATCH,
            &batch,
        )
        .await;
    }
    eprintln!("filled and planned in {:?}", started.elapsed());
}
