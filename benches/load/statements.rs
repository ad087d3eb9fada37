//! Round trips counted by statement, where PostgreSQL can: with
//! `pg_stat_statements` loaded (the throwaway cluster loads it; a server
//! given by DATABASE_URL may), each statement the run's database executed
//! is read before and after the measured window, from a second database
//! that has the extension (see `database`).
//! Every statement a client sends is one round trip (BEGIN and COMMIT
//! included, as `track_utility` counts them), so the difference says how
//! many the runtime needed per delivery, and for what.

use std::collections::HashMap;

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use crate::error::LoadError;

/// Calls per statement (normalized text) at one moment, and how many of
/// them the harness itself had made by then.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    calls: HashMap<String, i64>,
    own: i64,
}

/// One statement's share of a window.
#[derive(Debug, Clone, Serialize)]
pub struct StatementShare {
    pub query: String,
    pub calls: i64,
    pub per_delivery: f64,
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    query: String,
    #[diesel(sql_type = BigInt)]
    calls: i64,
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

/// The calls of every statement run in database `datname`, read in the
/// observer database at `observer` so the reading is not among them.
pub async fn snapshot(observer: &str, datname: &str, own: i64) -> Result<Snapshot, LoadError> {
    let mut conn = AsyncPgConnection::establish(observer).await?;
    let rows = diesel::sql_query(
        "SELECT min(s.query) AS query, sum(s.calls)::int8 AS calls
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
         WHERE d.datname = $1 GROUP BY s.queryid",
    )
    .bind::<Text, _>(datname)
    .load::<Row>(&mut conn)
    .await?;
    let mut calls = HashMap::new();
    for row in rows {
        *calls.entry(shorten(&row.query)).or_insert(0) += row.calls;
    }
    Ok(Snapshot { calls, own })
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
            .calls
            .iter()
            .map(|(query, calls)| {
                let calls = calls - before.calls.get(query).copied().unwrap_or(0);
                StatementShare {
                    query: query.clone(),
                    calls,
                    per_delivery: calls as f64 / deliveries.max(1) as f64,
                }
            })
            .filter(|s| s.calls > 0)
            .collect();
        let total = shares.iter().map(|s| s.calls).sum::<i64>() - (self.own - before.own);
        shares.sort_by_key(|s| std::cmp::Reverse(s.calls));
        shares.truncate(top);
        (total, shares)
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
