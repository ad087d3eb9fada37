//! The sessions likely in a migration's way: those holding a lock on a
//! table of remit's schema in this database, other than the asking one,
//! whose transaction has been open longer than a try waits (a claim's or a
//! finish's is over in milliseconds). The longest open first.
//!
//! It starts from `pg_locks`, which every role may read: a role without
//! `pg_read_all_stats` sees another role's session in `pg_stat_activity`
//! without its state or transaction start, and such a session is named
//! with what can be seen (its pid and role), not left out.
//!
//! An index built concurrently waits on the transactions themselves, not
//! on a table's lock: those are the ones `pg_blocking_pids` gives for the
//! building session (`blocking`).

use std::time::Duration;

use diesel::sql_types::{Double, Nullable, Text};
use diesel::RunQueryDsl as _;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;

use crate::store::contract::{LockHolder, StoreError};

/// At most this many are named.
const NAMED: i64 = 5;

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pid: i32,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Text)]
    application: String,
    #[diesel(sql_type = Nullable<Text>)]
    state: Option<String>,
    #[diesel(sql_type = Nullable<Double>)]
    open_seconds: Option<f64>,
}

pub(in crate::store::postgres) fn lock_holders(
    conn: &mut AsyncConnectionWrapper<AsyncPgConnection>,
    open_longer_than: Duration,
) -> Result<Vec<LockHolder>, StoreError> {
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT h.pid, coalesce(a.usename::text, '') AS role, \
                coalesce(a.application_name, '') AS application, a.state, \
                extract(epoch FROM now() - a.xact_start)::float8 AS open_seconds \
         FROM (SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
               WHERE l.granted AND l.locktype = 'relation' AND l.pid <> pg_backend_pid() \
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                 AND c.relnamespace = current_schema()::regnamespace) h \
         LEFT JOIN pg_stat_activity a ON a.pid = h.pid \
         WHERE a.xact_start IS NULL OR a.xact_start < now() - $1 * interval '1 millisecond' \
         ORDER BY a.xact_start NULLS LAST LIMIT $2",
    )
    .bind::<Double, _>(open_longer_than.as_millis() as f64)
    .bind::<diesel::sql_types::BigInt, _>(NAMED)
    .load(conn)?;
    Ok(rows.into_iter().map(Row::into_holder).collect())
}

/// The sessions the session `pid` waits for, as `lock_holders` names them.
pub(in crate::store::postgres) async fn blocking(
    conn: &mut AsyncPgConnection,
    pid: i32,
) -> Result<Vec<LockHolder>, StoreError> {
    let rows: Vec<Row> = diesel_async::RunQueryDsl::load(
        diesel::sql_query(
            "SELECT b.pid, coalesce(a.usename::text, '') AS role, \
                    coalesce(a.application_name, '') AS application, a.state, \
                    extract(epoch FROM now() - a.xact_start)::float8 AS open_seconds \
             FROM unnest(pg_blocking_pids($1)) AS b(pid) \
             LEFT JOIN pg_stat_activity a ON a.pid = b.pid \
             ORDER BY a.xact_start NULLS LAST LIMIT $2",
        )
        .bind::<diesel::sql_types::Integer, _>(pid)
        .bind::<diesel::sql_types::BigInt, _>(NAMED),
        conn,
    )
    .await?;
    Ok(rows.into_iter().map(Row::into_holder).collect())
}

impl Row {
    fn into_holder(self) -> LockHolder {
        LockHolder {
            pid: self.pid,
            role: self.role,
            application: self.application,
            state: self.state,
            open_for: self
                .open_seconds
                .map(|s| Duration::from_secs_f64(s.max(0.0))),
        }
    }
}
