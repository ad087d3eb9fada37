//! How long each PostgreSQL migration stalls the writes a running remit
//! makes, on a database of many tasks: a fresh database at the first
//! migration, filled with TASKS tasks (70 % delivered with an attempt,
//! 30 % pending, 100 destinations, 500 tenants), then every later
//! migration applied on its own as `remit migrate` applies it (in a
//! transaction, or alone outside one where its `metadata.toml` says so)
//! while four probes loop on connections of their own, 5 ms apart: a task
//! row's update, an attempt's insert, a task's read and a destination's
//! update. Each probe's longest statement during the migration is its
//! stall.
//!
//!     cargo bench --bench migrations [TASKS]
//!
//! Real PostgreSQL (DATABASE_URL, else 127.0.0.1:5432; `psql` on PATH), a
//! database of its own, dropped at the end. Prints a markdown table;
//! docs/operations.md ("Migrations on a live database") keeps the results
//! and tests/store/migration_lint.rs the rules that keep new migrations
//! short.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

const PROBES: [&str; 4] = [
    "task update",
    "attempt insert",
    "task read",
    "destination update",
];

fn base_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// `url` with its database replaced by `name` (and no query).
fn database_url(url: &str, name: &str) -> String {
    let without_query = url.split('?').next().unwrap();
    let at = without_query.rfind('/').unwrap();
    format!("{}/{name}", &without_query[..at])
}

fn psql(url: &str, in_transaction: bool, file: &Path) {
    let mut command = Command::new("psql");
    command.arg(url).args(["-v", "ON_ERROR_STOP=1", "-q"]);
    if in_transaction {
        command.arg("-1");
    }
    let output = command.arg("-f").arg(file).output().expect("psql runs");
    assert!(
        output.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn migrations() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    // As diesel orders them: by version, the name before the first `_`
    // without its dashes.
    dirs.sort_by_key(|d| {
        let name = d.file_name().unwrap().to_str().unwrap().to_owned();
        name.split('_').next().unwrap().replace('-', "")
    });
    dirs
}

fn in_transaction(dir: &Path) -> bool {
    !std::fs::read_to_string(dir.join("metadata.toml"))
        .is_ok_and(|m| m.contains("run_in_transaction = false"))
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = Text)]
    id: String,
}

/// Loops `probe` until `stop`; answers its longest statement.
async fn probe(
    url: String,
    probe: usize,
    ids: Arc<Vec<String>>,
    stop: Arc<AtomicBool>,
) -> Duration {
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    let mut worst = Duration::ZERO;
    let mut n = 0usize;
    while !AtomicBool::load(&stop, Ordering::Relaxed) {
        let id = &ids[n % ids.len()];
        let sql = match probe {
            0 => format!("UPDATE tasks SET updated_at = now() WHERE id = '{id}'"),
            1 => format!(
                "INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, outcome) \
                 VALUES ('{id}', {}, 1, 'probe', 'retry_wait')",
                1_000 + n
            ),
            2 => format!("SELECT state::text AS id FROM tasks WHERE id = '{id}'"),
            _ => format!(
                "UPDATE destinations SET updated_at = now() WHERE id = 'd{}'",
                n % 100
            ),
        };
        let started = Instant::now();
        // An error (a constraint of a later schema) still took its time.
        let _ = diesel::sql_query(sql).execute(&mut conn).await;
        worst = worst.max(started.elapsed());
        n += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    worst
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let tasks: u64 = std::env::args()
        .nth(1)
        .filter(|a| a != "--bench")
        .map_or(1_000_000, |a| a.parse().expect("TASKS is a number"));
    let base = base_url();
    let name = format!("remit_migrations_{}", uuid::Uuid::new_v4().simple());
    let mut admin = AsyncPgConnection::establish(&base).await.unwrap();
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut admin)
        .await
        .unwrap();
    let url = database_url(&base, &name);
    let dirs = migrations();
    psql(&url, true, &dirs[0].join("up.sql"));

    let filled = Instant::now();
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    for sql in [
        "INSERT INTO destinations (id, region, url) \
         SELECT 'd' || i, 'us', 'https://example.com/' || i FROM generate_series(0, 99) i"
            .to_owned(),
        format!(
            "INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext) \
             SELECT md5(i::text)::uuid, 'application/json', '\\x00', '\\x00', '\\x0102030405060708' \
             FROM generate_series(1, {tasks}) i"
        ),
        format!(
            "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, \
                                not_before, available_at, retry_horizon_at, attempt_count, \
                                idempotency_key, payload_ref, delivered_at, finalized_at) \
             SELECT md5(i::text)::uuid, 't' || (i % 500), 'r' || i, 'd' || (i % 100), 'us', \
                    CASE WHEN i % 10 < 7 THEN 'delivered' ELSE 'pending' END::task_state, \
                    now() - interval '30 days' + (i % 100000) * interval '1 minute', \
                    now() - interval '30 days' + (i % 100000) * interval '1 minute', \
                    now() + interval '300 days', CASE WHEN i % 10 < 7 THEN 1 ELSE 0 END, \
                    'msg_' || i, md5(i::text)::uuid, \
                    CASE WHEN i % 10 < 7 THEN now() END, CASE WHEN i % 10 < 7 THEN now() END \
             FROM generate_series(1, {tasks}) i"
        ),
        format!(
            "INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, outcome, \
                                   http_status) \
             SELECT md5(i::text)::uuid, 1, i, 'c', 'delivered', \
                    CASE WHEN i % 50 = 0 THEN 429 ELSE 200 END \
             FROM generate_series(1, {tasks}) i WHERE i % 10 < 7"
        ),
        "VACUUM ANALYZE".to_owned(),
    ] {
        diesel::sql_query(sql).execute(&mut conn).await.unwrap();
    }
    let ids: Vec<Id> =
        diesel::sql_query("SELECT id::text AS id FROM tasks WHERE state = 'pending' LIMIT 2000")
            .load(&mut conn)
            .await
            .unwrap();
    let ids = Arc::new(ids.into_iter().map(|i| i.id).collect::<Vec<_>>());
    drop(conn);
    println!(
        "filled {tasks} tasks in {:.1} s\n",
        filled.elapsed().as_secs_f64()
    );
    println!(
        "| migration | how | took (s) | {} |",
        PROBES.map(|p| format!("{p} (s)")).join(" | ")
    );
    println!("|---|---|---|{}", "---|".repeat(PROBES.len()));
    for dir in &dirs[1..] {
        let stop = Arc::new(AtomicBool::new(false));
        let probes: Vec<_> = (0..PROBES.len())
            .map(|p| tokio::spawn(probe(url.clone(), p, ids.clone(), stop.clone())))
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let tx = in_transaction(dir);
        let started = Instant::now();
        let file = dir.join("up.sql");
        tokio::task::spawn_blocking({
            let url = url.clone();
            move || psql(&url, tx, &file)
        })
        .await
        .unwrap();
        let took = started.elapsed();
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop.store(true, Ordering::Relaxed);
        let mut worst = Vec::new();
        for p in probes {
            worst.push(format!("{:.2}", p.await.unwrap().as_secs_f64()));
        }
        println!(
            "| {} | {} | {:.2} | {} |",
            dir.file_name().unwrap().to_str().unwrap(),
            if tx { "transaction" } else { "alone" },
            took.as_secs_f64(),
            worst.join(" | ")
        );
    }
    diesel::sql_query(format!("DROP DATABASE {name} WITH (FORCE)"))
        .execute(&mut admin)
        .await
        .unwrap();
}
