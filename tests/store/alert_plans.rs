//! The alert check's walks read what they report, not the table: on a
//! million tasks in the first user's shape (most of the history
//! delivered, two in five reminders due over the next six months, a
//! backlog of overdue ones), each walk is planned and run prepared, with
//! custom and generic plans, and none reads `tasks` or `task_queue` from
//! end to end; the buffers each reads are printed (`--nocapture`).

use std::time::Instant;

use remit::store::alerts_sql;

use crate::big_tables::{self, Statement};
use crate::support::TestDb;

const TASKS: i64 = 1_000_000;

/// A million tasks of region `eu` over 50 destinations: 60 % delivered
/// over the last eleven days, 39 % pending due over the next 180 days, and
/// 1 % pending and overdue by up to a day (the backlog the late walk
/// reports). Each with a horizon three days after its deadline.
const FILL: &[&str] = &[
    "INSERT INTO destinations (id, region, url) \
     SELECT 'd' || g, 'eu', 'http://127.0.0.1:9/h' FROM generate_series(1, 50) g",
    big_tables::ONE_PAYLOAD,
    "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, not_before, \
       available_at, retry_horizon_at, idempotency_key, payload_ref, delivered_at, \
       finalized_at, attempt_count) \
     SELECT (lpad(to_hex(g), 12, '0') || '70008000' || lpad(to_hex(g), 12, '0'))::uuid, \
       'tenant-' || (g % 1000), 'r' || g, 'd' || (g % 50 + 1), 'eu', \
       (CASE WHEN g % 100 < 60 THEN 'delivered' ELSE 'pending' END)::task_state, \
       nb, nb, nb + interval '3 days', 'k' || g, '00000000-0000-7000-8000-000000000000', \
       CASE WHEN g % 100 < 60 THEN nb + interval '1 second' END, \
       CASE WHEN g % 100 < 60 THEN nb + interval '1 second' END, \
       CASE WHEN g % 100 < 60 THEN 1 ELSE 0 END \
     FROM generate_series(1, 1000000) g, \
       LATERAL (SELECT CASE \
         WHEN g % 100 < 60 THEN now() - (g % 950400) * interval '1 second' \
         WHEN g % 100 = 99 THEN now() - (g % 86400) * interval '1 second' \
         ELSE now() + (g % 15552000) * interval '1 second' END AS nb) t",
];

fn destinations() -> String {
    let ids: Vec<String> = (1..=50).map(|i| format!("'d{i}'")).collect();
    format!("ARRAY[{}]::text[]", ids.join(", "))
}

#[tokio::test]
async fn the_alert_walks_use_their_indexes_on_a_million_tasks() {
    let _turn = big_tables::TURN.lock().await;
    let db = TestDb::with_database_clock().await;
    let mut conn = db.conn().await;
    let started = Instant::now();
    big_tables::fill(&mut conn, FILL).await;
    eprintln!("filled {TASKS} tasks in {:?}", started.elapsed());

    let ids = destinations();
    let cutoffs = format!("{ids}, array_fill(now() - interval '5 minutes', ARRAY[50]), 1000");
    let late_types = "text[], timestamptz[], bigint";
    // The first check after an upgrade, or after an outage: every
    // destination's backlog not yet announced, 1,000 each at most.
    let backlog = big_tables::assert_cheap(
        &mut conn,
        &Statement {
            name: "late walk of a backlog",
            sql: alerts_sql::LATE_SQL,
            types: late_types,
            args: &cutoffs,
        },
    )
    .await;
    // A later check: the backlog announced (marked), nothing new late.
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(
            "UPDATE task_queue SET late_seen = true WHERE not_before <= now() - interval '5 minutes'",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    big_tables::vacuum_until_visible(&mut conn, "task_queue").await;
    let steady = big_tables::assert_cheap(
        &mut conn,
        &Statement {
            name: "late walk, the backlog announced",
            sql: alerts_sql::LATE_SQL,
            types: late_types,
            args: &cutoffs,
        },
    )
    .await;
    assert!(
        steady < 2_000,
        "a walk with nothing new reads a few pages per destination, not {steady}"
    );
    assert!(backlog > steady);
    big_tables::assert_cheap(
        &mut conn,
        &Statement {
            name: "horizon walk, the next hour",
            sql: alerts_sql::HORIZON_SQL,
            types: "text, timestamptz, bigint",
            args: "'eu', now() + interval '1 hour', 1000",
        },
    )
    .await;
}
