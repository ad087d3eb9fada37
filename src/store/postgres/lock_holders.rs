//! The sessions likely in a migration's way: those of this database, other
//! than the asking one, with a transaction open longer than the migration
//! waited and a lock on a table granted. The longest open first.

use std::time::Duration;

use diesel::sql_types::{Double, Integer, Text};
use diesel::RunQueryDsl as _;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;

use super::StoreError;
use crate::store::LockHolder;

/// At most this many are named.
const NAMED: i64 = 5;

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = Integer)]
    pid: i32,
    #[diesel(sql_type = Text)]
    application: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Double)]
    open_seconds: f64,
}

pub(super) fn lock_holders(
    conn: &mut AsyncConnectionWrapper<AsyncPgConnection>,
    open_longer_than: Duration,
) -> Result<Vec<LockHolder>, StoreError> {
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT a.pid, coalesce(a.application_name, '') AS application, \
                coalesce(a.state, '') AS state, \
                extract(epoch FROM now() - a.xact_start)::float8 AS open_seconds \
         FROM pg_stat_activity a \
         WHERE a.pid <> pg_backend_pid() AND a.datname = current_database() \
           AND a.xact_start < now() - $1 * interval '1 millisecond' \
           AND EXISTS (SELECT 1 FROM pg_locks l \
                       WHERE l.pid = a.pid AND l.granted AND l.locktype = 'relation') \
         ORDER BY a.xact_start LIMIT $2",
    )
    .bind::<Double, _>(open_longer_than.as_millis() as f64)
    .bind::<diesel::sql_types::BigInt, _>(NAMED)
    .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|r| LockHolder {
            pid: r.pid,
            application: r.application,
            state: r.state,
            open_for: Duration::from_secs_f64(r.open_seconds.max(0.0)),
        })
        .collect())
}
