//! The table a long-lived schedule has under its stream (the renewals
//! workload; any paced workload with LOAD_BACKDROP): a month of ended
//! reminders and a year of future ones, of many tenants over every
//! destination, and a few long ordering lines, written in SQL before the
//! arrivals start. A million calls to the API would take longer than the
//! run; the rows are the ones the API would have left, and the runtime
//! never opens their payload (none is due during a run).
//!
//! Plain inserts, so whatever the store keeps up to date on an insert (its
//! triggers included) is kept up to date here too. Only `tasks`,
//! `payloads` and `destinations` are named.

use std::time::Instant;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use crate::database::RunDatabase;
use crate::enqueue::REGION;
use crate::error::LoadError;
use crate::settings::Settings;

/// Ordering lines of the backdrop, and the longest a line gets (with a
/// smaller backdrop they are shorter: together a hundredth of it).
const LINES: usize = 5;
const LINE_LENGTH: usize = 2_000;
/// Shares of the rows that are not in a line, per hundred: ended
/// delivered, ended failed; the rest are pending.
const DELIVERED_PERCENT: usize = 70;
const FAILED_PERCENT: usize = 1;

/// The one payload row every backdrop task points at: the foreign key
/// needs a row, and no backdrop task is claimed during a run.
const PAYLOAD_REF: &str = "00000000-0000-7000-8000-000000000000";

/// What the backdrop holds and how long writing it took.
#[derive(Debug, Clone, Serialize)]
pub struct Filled {
    pub tasks: usize,
    pub tenants: usize,
    pub lines: usize,
    pub line_length: usize,
    /// Rows `delivered` once it was written (the run's deliveries are
    /// counted on top of these).
    pub delivered: i64,
    pub pending: i64,
    /// The inserts, and VACUUM (ANALYZE) with the checkpoint after them.
    pub insert_s: f64,
    pub vacuum_s: f64,
}

/// Writes `settings.backdrop` tasks into the run's database, whose
/// destinations `d0…` are registered.
pub async fn fill(db: &RunDatabase, settings: &Settings) -> Result<Filled, LoadError> {
    if db.is_sqlite() {
        return Err(LoadError::Setup(
            "LOAD_BACKDROP is written in PostgreSQL's SQL: run on PostgreSQL".into(),
        ));
    }
    let total = settings.backdrop;
    let line_length = LINE_LENGTH.min(total / (LINES * 100));
    let lined = if line_length > 0 {
        LINES * line_length
    } else {
        0
    };
    let shape = Shape {
        destinations: settings.destinations,
        tenant: tenant_sql(settings.tenants),
    };
    eprintln!(
        "{}: writing a backdrop of {total} tasks ({LINES} lines of {line_length})…",
        settings.workload
    );
    let mut conn = AsyncPgConnection::establish(db.url()).await?;
    let started = Instant::now();
    let mut steps = vec![one_payload(), shape.unlined(total - lined)];
    if line_length > 0 {
        steps.push(shape.lined(total - lined + 1, line_length));
    }
    for sql in &steps {
        diesel::sql_query(sql.as_str()).execute(&mut conn).await?;
    }
    let insert_s = started.elapsed().as_secs_f64();
    let vacuumed = Instant::now();
    // As autovacuum would have long since: statistics for the planner,
    // hint bits set and pages all-visible, so the first reads in the
    // window do not write them (WAL the runtime did not cause), and
    // autovacuum has no reason to start on a million new rows meanwhile.
    // Every table of the database: the store keeps tables of its own beside
    // `tasks` from the same writes.
    diesel::sql_query("VACUUM (ANALYZE)")
        .execute(&mut conn)
        .await?;
    // The fill's WAL would bring on a checkpoint in the window; one now
    // leaves the window the checkpoints a schedule has anyway. Where the
    // role may not, the window may hold one.
    if let Err(e) = diesel::sql_query("CHECKPOINT").execute(&mut conn).await {
        eprintln!(
            "{}: no checkpoint after the backdrop ({e})",
            settings.workload
        );
    }
    let vacuum_s = vacuumed.elapsed().as_secs_f64();
    drop(conn);
    let states = db.states().await?;
    let count = |state: &str| states.get(state).copied().unwrap_or(0);
    eprintln!(
        "{}: backdrop written in {:.1} s (inserts {insert_s:.1} s, vacuum and checkpoint {vacuum_s:.1} s): {states:?}",
        settings.workload,
        insert_s + vacuum_s
    );
    Ok(Filled {
        tasks: total,
        tenants: settings.tenants,
        lines: if line_length > 0 { LINES } else { 0 },
        line_length,
        delivered: count("delivered"),
        pending: count("pending"),
        insert_s,
        vacuum_s,
    })
}

fn one_payload() -> String {
    format!(
        "INSERT INTO payloads (payload_ref, content_type, key_fingerprint, nonce, ciphertext) \
         VALUES ('{PAYLOAD_REF}', 'application/json', '\\x00', '\\x00', '\\x00')"
    )
}

/// What every backdrop row shares with the stream: its destinations and
/// tenants.
struct Shape {
    destinations: usize,
    /// The tenant of row `g`, in SQL.
    tenant: String,
}

/// The tenant of row `g` as the stream names tenants (`enqueue`), so the
/// two share them.
fn tenant_sql(tenants: usize) -> String {
    match tenants {
        1 => "'load'".to_owned(),
        n => format!("'tenant-' || (g % {n})"),
    }
}

/// The columns every insert names; the rest keep their defaults.
const COLUMNS: &str = "id, tenant_id, reminder_id, destination_id, region, state, not_before, \
     available_at, retry_horizon_at, idempotency_key, payload_ref, failure_reason, \
     delivered_at, finalized_at, attempt_count, ordering_key";

/// Row `g`'s id, reminder and key. The API's ids are UUIDv7s, whose first
/// 48 bits are the time in milliseconds: these read as 1970. The stream's
/// reminders are `r<i>`, these `b<g>`.
const IDS: &str = "(lpad(to_hex(g), 12, '0') || '70008000' || lpad(to_hex(g), 12, '0'))::uuid, \
     'b' || g";
/// An idempotency key of the API's length (`msg_` and 26 characters).
const KEY: &str = "'msg_' || left(md5('b' || g), 26)";

impl Shape {
    /// Rows `1..=rows`, not in any line: 70 % delivered and 1 % failed
    /// over the last 29 days (inside retention's 30, so retention, which
    /// would take the shared payload with the first of them, finds none),
    /// the rest pending and due over the year from an hour from now.
    /// Times are spread by a multiplicative hash of `g`, so neighbours in
    /// the heap are not neighbours in time, as rows scheduled weeks apart
    /// are not.
    fn unlined(&self, rows: usize) -> String {
        let d = self.destinations;
        let ended = DELIVERED_PERCENT;
        let failed = DELIVERED_PERCENT + FAILED_PERCENT;
        format!(
            "INSERT INTO tasks ({COLUMNS}) \
             SELECT {IDS}, {tenant}, 'd' || (g % {d}), '{REGION}', k.state::task_state, \
               t.nb, t.nb, t.nb + interval '3 days', {KEY}, '{PAYLOAD_REF}', \
               CASE WHEN k.state = 'failed' THEN 'http_410' END, \
               CASE WHEN k.state = 'delivered' THEN t.nb + interval '1 second' END, \
               CASE WHEN k.state <> 'pending' THEN t.nb + interval '1 second' END, \
               CASE WHEN k.state = 'pending' THEN 0 ELSE 1 END, NULL \
             FROM generate_series(1::int8, {rows}::int8) g, \
               LATERAL (SELECT CASE WHEN g % 100 < {ended} THEN 'delivered' \
                                    WHEN g % 100 < {failed} THEN 'failed' \
                                    ELSE 'pending' END AS state) k, \
               LATERAL (SELECT CASE WHEN k.state = 'pending' \
                   THEN now() + interval '1 hour' + (g * 7919 % 31536000) * interval '1 second' \
                   ELSE now() - interval '29 days' + (g * 7919 % 2505540) * interval '1 second' \
                   END AS nb) t",
            tenant = self.tenant,
        )
    }

    /// `LINES` lines of `length` pending rows from row `first` on, keyed
    /// `backdrop-<n>`, each at the destination the stream's line `n` goes
    /// to (`enqueue::line_destination`), its head due an hour from now and
    /// the rest spread over the year after it.
    fn lined(&self, first: usize, length: usize) -> String {
        let d = self.destinations;
        let last = first + LINES * length - 1;
        format!(
            "INSERT INTO tasks ({COLUMNS}) \
             SELECT {IDS}, {tenant}, 'd' || (l.line * {d} / {LINES} % {d}), '{REGION}', \
               'pending', t.nb, t.nb, t.nb + interval '3 days', {KEY}, '{PAYLOAD_REF}', \
               NULL, NULL, NULL, 0, 'backdrop-' || l.line \
             FROM generate_series({first}::int8, {last}::int8) g, \
               LATERAL (SELECT (g - {first}) / {length} AS line, \
                               (g - {first}) % {length} AS place) l, \
               LATERAL (SELECT now() + interval '1 hour' \
                   + (l.place * 31536000 / {length}) * interval '1 second' AS nb) t",
            tenant = self.tenant,
        )
    }
}
