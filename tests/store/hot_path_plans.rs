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

use diesel_async::RunQueryDsl;
use remit::store::hot_path_sql;

use crate::big_tables::{self, assert_cheap, Statement};
use crate::support::TestDb;

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

/// The claim of 64 (at most 16 a destination) for region `us`, resuming
/// after tenant `tenant_after`.
fn claim_of_64(name: &'static str, args: &'static str) -> Statement<'static> {
    Statement {
        name,
        sql: hot_path_sql::claim(),
        types: "timestamptz, text, text, bigint, int, int, text[], text, text, text[], int[]",
        args,
    }
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
        &claim_of_64(
            "claim",
            "NULL, 'us', 'plans', 30000, 64, 16, '{}', '', '', '{}', '{}'",
        ),
    )
    .await;
    // The turn over the busy destination's tenants resuming past its last
    // busy tenant: next in byte order come the 20,000 with nothing due.
    // They cost a range of index entries, not a probe each (which read
    // about 124,000 buffers here).
    let past_idle_tenants = assert_cheap(
        &mut conn,
        &claim_of_64(
            "claim resuming before idle tenants",
            "NULL, 'us', 'plans', 30000, 64, 16, '{}', '', 'busy-9', '{}', '{}'",
        ),
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
        &claim_of_64(
            "claim in a drain",
            "NULL, 'us', 'plans', 30000, 64, 16, '{}', '', '', '{}', '{}'",
        ),
    )
    .await;
}

/// The ids (`g` of the fill) of `n` tasks due now, outside any ordering
/// line.
fn due_now(n: usize) -> Vec<u64> {
    (1..1_000_000u64)
        .filter(|g| g % 100 > 70 && g % 997 == 0)
        .take(n)
        .collect()
}

/// The task id the fill gives row `g`.
fn task_id(g: u64) -> String {
    let hex = format!("{g:012x}");
    format!("{}-{}-7000-8000-{hex}", &hex[..8], &hex[8..])
}

/// A PostgreSQL array literal of `items`, each quoted, cast to `of`.
fn array(items: impl IntoIterator<Item = String>, of: &str) -> String {
    let quoted: Vec<String> = items.into_iter().map(|i| format!("\"{i}\"")).collect();
    format!("'{{{}}}'::{of}", quoted.join(","))
}

/// `n` NULLs of type `of`, as an array.
fn nulls(of: &str, n: usize) -> String {
    format!("array_fill(NULL::{of}, ARRAY[{n}])")
}

/// `n` copies of `value`, as an array.
fn copies(value: &str, n: usize) -> String {
    format!("array_fill({value}, ARRAY[{n}])")
}

#[tokio::test]
async fn every_statement_of_a_delivery_is_cheap_on_a_million_reminders() {
    let _turn = big_tables::TURN.lock().await;
    let db = TestDb::with_database_clock().await;
    let mut conn = db.conn().await;
    big_tables::fill(&mut conn, FILL).await;
    // 64 of the due tasks in flight, as a claim leaves them (token = g).
    let leased = due_now(64);
    assert_eq!(leased.len(), 64, "the fill has 64 due tasks without a line");
    let ids = array(leased.iter().map(|g| task_id(*g)), "uuid[]");
    let tokens = array(leased.iter().map(|g| g.to_string()), "int8[]");
    diesel::sql_query(format!(
        "UPDATE tasks t SET state = 'leased', lease_token = l.token, lease_owner = 'plans', \
           lease_expires_at = now() + interval '30 seconds', attempt_count = 1 \
         FROM unnest({ids}, {tokens}) AS l(id, token) WHERE t.id = l.id"
    ))
    .execute(&mut conn)
    .await
    .unwrap();
    let n = leased.len();
    let one = task_id(leased[0]);
    let destinations = array((1..=50).map(|d| format!("d{d}")), "text[]");

    let statements: Vec<(&str, &str, String, String)> = vec![
        (
            "finish (64 delivered)",
            hot_path_sql::FINISH,
            "timestamptz, uuid[], int8[], text[], text[], text[], int8[], text[], int2[], \
             timestamptz[], timestamptz[], text[], text[], timestamptz[], int2[], text[], \
             int2[], int8[], int8, int4, int8[]"
                .into(),
            format!(
                "NULL, {ids}, {tokens}, {owners}, {targets}, {targets}, {no_delay}, {no_text}, \
                 {ok}, {at}, {at}, {no_text}, {no_text}, {no_at}, {healthy}, {no_text}, \
                 {succeeded}, {latency}, 3600, 10, {bounds}",
                succeeded = copies("0::int2", n),
                latency = copies("20000::int8", n),
                bounds = array(
                    remit::domain::bucket_bounds_us().iter().map(i64::to_string),
                    "int8[]"
                ),
                owners = copies("'plans'::text", n),
                targets = copies("'delivered'::text", n),
                no_delay = nulls("int8", n),
                no_text = nulls("text", n),
                ok = copies("200::int2", n),
                at = copies("now()", n),
                no_at = nulls("timestamptz", n),
                healthy = copies("0::int2", n),
            ),
        ),
        (
            "pause (50 destinations)",
            hot_path_sql::PAUSE,
            "timestamptz, text[], int8[], text[], text".into(),
            format!(
                "NULL, {destinations}, {}, {destinations}, 'plans'",
                copies("1000::int8", 50)
            ),
        ),
        (
            "hand-back",
            hot_path_sql::HAND_BACK,
            "uuid, bigint, timestamptz, bigint".into(),
            format!("'{one}', {}, NULL, 1000", leased[0]),
        ),
        (
            "lease extension",
            hot_path_sql::EXTEND,
            "uuid, bigint, timestamptz, bigint".into(),
            format!("'{one}', {}, NULL, 30000", leased[0]),
        ),
        (
            "token take (50 destinations)",
            hot_path_sql::TAKE,
            "timestamptz, text[], float8[], float8[], int4[]".into(),
            format!(
                "NULL, {destinations}, {rate}, {rate}, {want}",
                rate = copies("100::float8", 50),
                want = copies("4", 50)
            ),
        ),
        (
            "schedule (100 tasks)",
            hot_path_sql::SCHEDULE,
            "uuid[], text[], text[], text[], text[], timestamptz[], timestamptz[], text[], \
             uuid[], text[], bytea[], bytea[], bytea[], text[], text[], timestamptz, text"
                .into(),
            format!(
                "{new_ids}, {tenants}, {reminders}, {dests}, {regions}, {due}, {horizon}, \
                 {keys}, {refs}, {types}, {bytes}, {bytes}, {bytes}, {no_text}, {no_text}, NULL, 'plans'",
                new_ids = array((0..100).map(|i| task_id(9_000_000 + i)), "uuid[]"),
                tenants = array((0..100).map(|i| format!("tenant-{i}")), "text[]"),
                reminders = array((0..100).map(|i| format!("new-{i}")), "text[]"),
                dests = array((0..100).map(|i| format!("d{}", i % 1000 + 1)), "text[]"),
                regions = copies("'us'::text", 100),
                due = copies("now() + interval '90 days'", 100),
                horizon = copies("now() + interval '93 days'", 100),
                keys = array((0..100).map(|i| format!("new-key-{i}")), "text[]"),
                refs = array((0..100).map(|i| task_id(8_000_000 + i)), "uuid[]"),
                types = copies("'application/json'::text", 100),
                bytes = copies("'\\x00'::bytea", 100),
                no_text = nulls("text", 100),
            ),
        ),
        (
            "settle of disabled destinations' tasks",
            hot_path_sql::SETTLE_DISABLED,
            "timestamptz, text, int".into(),
            "NULL, 'us', 100".into(),
        ),
        (
            "next due",
            hot_path_sql::NEXT_DUE,
            "timestamptz, text".into(),
            "NULL, 'us'".into(),
        ),
    ];
    for (name, sql, types, args) in &statements {
        let statement = Statement {
            name,
            sql,
            types,
            args,
        };
        assert_cheap(&mut conn, &statement).await;
    }
}
