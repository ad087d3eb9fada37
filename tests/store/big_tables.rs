//! What the tests that plan statements on a million rows share: filling a
//! schema in bulk, finding sequential scans in a plan, and taking turns.

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

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
    steps.push("RESET session_replication_role".into());
    steps.extend(
        [
            "VACUUM (ANALYZE) destinations",
            "VACUUM (ANALYZE) tasks",
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
    defs.into_iter().map(|d| d.name).collect()
}

/// Every `Seq Scan` of `tasks`, `attempts` or `payloads` in a JSON plan.
pub fn seq_scans(node: &serde_json::Value, found: &mut Vec<String>) {
    match node {
        serde_json::Value::Object(map) => {
            if map.get("Node Type").and_then(|t| t.as_str()) == Some("Seq Scan") {
                let relation = map
                    .get("Relation Name")
                    .and_then(|r| r.as_str())
                    .unwrap_or("");
                if ["tasks", "attempts", "payloads"].contains(&relation) {
                    found.push(relation.to_owned());
                }
            }
            map.values().for_each(|v| seq_scans(v, found));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| seq_scans(v, found)),
        _ => {}
    }
}
