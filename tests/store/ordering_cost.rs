//! What ordering keys cost the claim on PostgreSQL, measured with EXPLAIN
//! (ANALYZE, BUFFERS) of the store's own claim statement: tasks without a
//! key read exactly what they read without the ordering blocks, and never
//! enter the partial index `task_queue_lines`; a keyed task's wait is an
//! index probe, never a walk of the queue.

use crate::claim_cost::{explain_claim, LIMIT};
use crate::support::TestDb;
use remit::store::hot_path_sql;

/// Where each ordering block of the claim starts; each ends with `END)`.
const ORDERING_BLOCK: &str = "AND (t.ordering_key IS NULL OR CASE";

/// The claim statement as it was before ordering keys: every ordering
/// block cut out.
fn claim_without_ordering() -> String {
    let mut sql = hot_path_sql::claim().to_owned();
    let mut cut = 0;
    while let Some(start) = sql.find(ORDERING_BLOCK) {
        let end = start + sql[start..].find("END)").unwrap() + 4;
        sql.replace_range(start..end, "");
        cut += 1;
    }
    assert_eq!(
        cut, 4,
        "the destination probe's, the tenant probe's, the tenant rows' and the candidates' blocks"
    );
    sql
}

/// `destinations` destinations, each with `per_destination` tasks due,
/// all in the line `key` (or in none).
async fn seed(db: &TestDb, destinations: usize, per_destination: usize, key: Option<&str>) {
    db.execute(&format!(
        "INSERT INTO destinations (id, region, url)
         SELECT 'd-' || lpad(i::text, 8, '0'), 'us', 'https://hooks.example.com/' || i
         FROM generate_series(1, {destinations}) i"
    ))
    .await;
    let key = key.map_or("NULL".to_owned(), |k| format!("'{k}'"));
    db.execute(&format!(
        "WITH p AS (
             INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext)
             SELECT gen_random_uuid(), 'application/json', '\\x00', '\\x00', '\\x00'
             FROM generate_series(1, {destinations} * {per_destination})
             RETURNING payload_ref),
         numbered AS (SELECT payload_ref, row_number() OVER () - 1 AS i FROM p)
         INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, not_before,
                            available_at, retry_horizon_at, idempotency_key, payload_ref,
                            ordering_key)
         SELECT gen_random_uuid(), 'clinic-1', 'r-' || i,
                'd-' || lpad((i % {destinations} + 1)::text, 8, '0'),
                'us', now() - interval '1 minute', now() - interval '1 minute',
                now() + interval '1 day', 'msg_' || payload_ref, payload_ref, {key}
         FROM numbered"
    ))
    .await;
    db.execute("VACUUM ANALYZE tasks, task_queue, destinations, payloads")
        .await;
}

/// The node types of every scan of `relation` in the plan under `node`.
fn scans_of(node: &serde_json::Value, relation: &str, found: &mut Vec<String>) {
    if node["Relation Name"] == relation {
        found.push(node["Node Type"].as_str().unwrap_or_default().to_owned());
    }
    for child in node["Plans"].as_array().into_iter().flatten() {
        scans_of(child, relation, found);
    }
}

fn buffers_and_rows(plan: &serde_json::Value) -> (u64, u64) {
    let top = &plan[0]["Plan"];
    let hit = top["Shared Hit Blocks"].as_u64().unwrap();
    let read = top["Shared Read Blocks"].as_u64().unwrap();
    (hit + read, top["Actual Rows"].as_u64().unwrap())
}

#[tokio::test]
async fn tasks_without_a_key_pay_nothing_for_ordering() {
    let db = TestDb::with_database_clock().await;
    let empty_index = db
        .count("SELECT pg_relation_size('task_queue_lines') AS n")
        .await;
    seed(&db, 500, 1, None).await;
    assert_eq!(
        db.count("SELECT pg_relation_size('task_queue_lines') AS n")
            .await,
        empty_index,
        "a task without a key entered the ordering index"
    );

    let (with, claimed) = buffers_and_rows(&explain_claim(&db, hot_path_sql::claim()).await);
    assert_eq!(claimed, LIMIT as u64, "the claim leased a full batch");
    // The rolled-back lease left dead versions; a vacuum gives the second
    // measurement the same room to update in.
    db.execute("VACUUM ANALYZE tasks, task_queue").await;
    let (without, claimed) = buffers_and_rows(&explain_claim(&db, &claim_without_ordering()).await);
    assert_eq!(claimed, LIMIT as u64);
    // And the store's claim once more, measured after a vacuum as the
    // variant was, so the order of the runs does not decide the comparison.
    db.execute("VACUUM ANALYZE tasks, task_queue").await;
    let (again, _) = buffers_and_rows(&explain_claim(&db, hot_path_sql::claim()).await);
    let with = with.min(again);
    eprintln!("a claim of tasks without a key: {with} buffers, {without} without ordering");
    // Had a task without a key probed the ordering index, each of the 64
    // rows leased would have cost at least one buffer more.
    assert!(
        with <= without + 8,
        "{with} buffers with the ordering blocks, {without} without"
    );
}

#[tokio::test]
async fn a_line_takes_only_its_head_through_the_ordering_index() {
    let db = TestDb::with_database_clock().await;
    // Four hundred destinations, each with one line of five due tasks.
    seed(&db, 400, 5, Some("patient-1")).await;
    let plan = explain_claim(&db, hot_path_sql::claim()).await;
    let (buffers, claimed) = buffers_and_rows(&plan);
    assert_eq!(claimed, LIMIT as u64, "one head of each of the first lines");
    // Through the ordering index, or, with lines this short, another index
    // of the queue the planner may find as cheap when the statistics or
    // the visibility map (held back by other sessions' snapshots) move its
    // estimates: a probe of the line's few rows either way, never a walk
    // of the queue.
    let text = plan.to_string();
    let mut queue_scans = Vec::new();
    scans_of(&plan[0]["Plan"], "task_queue", &mut queue_scans);
    assert!(
        !queue_scans.iter().any(|s| s == "Seq Scan"),
        "the queue is walked: {queue_scans:?}: {text}"
    );
    let through_lines = text.contains(r#""Index Name":"task_queue_lines""#);
    eprintln!(
        "a claim of {claimed} heads of lines of five: {buffers} buffers, {} scans of the queue{}",
        queue_scans.len(),
        if through_lines {
            ", the ordering index among them"
        } else {
            ""
        }
    );
}
