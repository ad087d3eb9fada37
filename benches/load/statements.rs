//! Round trips counted by statement, where PostgreSQL can: with
//! `pg_stat_statements` loaded (the throwaway cluster loads it; a server
//! given by DATABASE_URL may), each statement the run's database executed
//! is read before and after the measured window, from a second database
//! that has the extension (see `database`).
//! Every statement a client sends is one round trip (BEGIN and COMMIT
//! included, as `track_utility` counts them), so the difference says how
//! many the runtime needed per delivery, and for what.
//!
//! The same readings give the claim's cost: the buffers (shared blocks hit
//! or read) its statements touched over the window, per task they
//! returned.

use std::collections::HashMap;

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use crate::error::LoadError;

/// What marks the claim among the statements: its compare-and-set on an
/// ordering line's row. No other statement of remit writes that table
/// under that alias (the claim's opening `WITH RECURSIVE params` is shared
/// with the next-due query).
pub const CLAIM_MARKER: &str = "ordering_lines AS l";

/// A statement's counters, summed over its entries.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    calls: i64,
    /// shared_blks_hit + shared_blks_read.
    blocks: i64,
    rows: i64,
    /// total_exec_time, in milliseconds.
    exec_ms: f64,
}

/// The counters per statement (normalized text) at one moment, those of
/// the claim's statements together, and how many calls the harness itself
/// had made by then.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    statements: HashMap<String, Counts>,
    claim: Counts,
    own: i64,
}

/// The claim over a window.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ClaimCost {
    pub calls: i64,
    /// Tasks the claims returned.
    pub tasks: i64,
    /// Buffers the claims touched, per task they returned; `None` when
    /// they returned none.
    pub buffers_per_task: Option<f64>,
}

/// One statement's share of a window.
#[derive(Debug, Clone, Serialize)]
pub struct StatementShare {
    pub query: String,
    pub calls: i64,
    pub per_delivery: f64,
    /// The server's time executing it, per delivery, in microseconds:
    /// where PostgreSQL's share of a delivery goes.
    pub exec_us_per_delivery: f64,
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    query: String,
    #[diesel(sql_type = BigInt)]
    calls: i64,
    #[diesel(sql_type = BigInt)]
    blocks: i64,
    #[diesel(sql_type = BigInt)]
    rows: i64,
    #[diesel(sql_type = diesel::sql_types::Double)]
    exec_ms: f64,
}

/// Creates the extension in the database at `url` and checks that it
/// answers (it does only when the server preloads the library).
pub async fn enable(url: &str) -> bool {
    let Ok(mut conn) = AsyncPgConnection::establish(url).await else {
        return false;
    };
    let created = diesel::sql_query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .execute(&mut conn)
        .await;
    let answers = diesel::sql_query("SELECT count(*) FROM pg_stat_statements")
        .execute(&mut conn)
        .await;
    created.is_ok() && answers.is_ok()
}

/// The counters of every statement run in database `datname`, read in
/// the observer database at `observer` so the reading is not among them.
pub async fn snapshot(observer: &str, datname: &str, own: i64) -> Result<Snapshot, LoadError> {
    let mut conn = AsyncPgConnection::establish(observer).await?;
    let rows = diesel::sql_query(
        "SELECT min(s.query) AS query, sum(s.calls)::int8 AS calls,
                sum(s.shared_blks_hit + s.shared_blks_read)::int8 AS blocks,
                sum(s.rows)::int8 AS rows, sum(s.total_exec_time)::float8 AS exec_ms
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
         WHERE d.datname = $1 GROUP BY s.queryid",
    )
    .bind::<Text, _>(datname)
    .load::<Row>(&mut conn)
    .await?;
    let mut snapshot = Snapshot {
        own,
        ..Snapshot::default()
    };
    for row in rows {
        let counts = Counts {
            calls: row.calls,
            blocks: row.blocks,
            rows: row.rows,
            exec_ms: row.exec_ms,
        };
        // Told apart on the whole text: the shortened one ends long
        // before the marker.
        if row.query.contains(CLAIM_MARKER) {
            snapshot.claim.add(counts);
        }
        snapshot
            .statements
            .entry(shorten(&row.query))
            .or_default()
            .add(counts);
    }
    Ok(snapshot)
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.calls += other.calls;
        self.blocks += other.blocks;
        self.rows += other.rows;
        self.exec_ms += other.exec_ms;
    }
}

impl Snapshot {
    /// All calls made since `before` but the harness's, and the statements
    /// that made the most of them.
    pub fn since(
        &self,
        before: &Snapshot,
        deliveries: u64,
        top: usize,
    ) -> (i64, Vec<StatementShare>) {
        let mut shares: Vec<StatementShare> = self
            .statements
            .iter()
            .map(|(query, counts)| {
                let earlier = before.statements.get(query).copied().unwrap_or_default();
                let calls = counts.calls - earlier.calls;
                let per = |n: f64| n / deliveries.max(1) as f64;
                StatementShare {
                    query: query.clone(),
                    calls,
                    per_delivery: per(calls as f64),
                    exec_us_per_delivery: per((counts.exec_ms - earlier.exec_ms) * 1000.0),
                }
            })
            .filter(|s| s.calls > 0)
            .collect();
        let total = shares.iter().map(|s| s.calls).sum::<i64>() - (self.own - before.own);
        shares.sort_by_key(|s| std::cmp::Reverse(s.calls));
        shares.truncate(top);
        (total, shares)
    }

    /// The claim's calls, tasks and buffers since `before`.
    pub fn claim_since(&self, before: &Snapshot) -> ClaimCost {
        let tasks = self.claim.rows - before.claim.rows;
        let blocks = self.claim.blocks - before.claim.blocks;
        ClaimCost {
            calls: self.claim.calls - before.claim.calls,
            tasks,
            buffers_per_task: (tasks > 0).then(|| blocks as f64 / tasks as f64),
        }
    }
}

/// One line of at most 100 characters: enough to tell statements apart.
fn shorten(query: &str) -> String {
    let line = query.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
