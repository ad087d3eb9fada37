//! A connection pooler in front of PostgreSQL (PgBouncer), and what remit
//! does differently behind one.
//!
//! A pooler in session mode gives each client a server for the whole
//! session: everything works, except that PgBouncer refuses the startup
//! parameter `options`, which remit uses to ask for `enable_seqscan=off`
//! and `jit=off` (or, with `ignore_startup_parameters = options`, drops
//! it); through a session pooler remit sets them with `SET` once
//! connected. Every connection remit opens to PostgreSQL itself asks, in
//! the same `options`, for a setting no server, role or database can
//! supply, a value fresh to that connection, and reads it back before
//! anything else (`connect::check_options_arrived`): a pooler remit was
//! not told of is named on the first connection it passes, whatever the
//! role's defaults say. In transaction mode it gives a server per
//! transaction, so whatever lives in a session goes another way:
//! - named prepared statements: each statement is sent unnamed, in one
//!   Parse/Bind/Describe/Execute/Sync (`set_unnamed_statements`, from the
//!   vendored diesel-async), and tokio-postgres's type cache is filled once
//!   per connection inside one transaction ([`warm_up`]);
//! - session settings: each statement run outside a transaction goes in a
//!   transaction of its own that sets them first (`BEGIN; SET LOCAL …`,
//!   the statement, `COMMIT`, sent together in one round trip), so the
//!   server plans it with them and they end with it: no server or role
//!   setting is needed, and no other client of the server sees them. A
//!   claim planned with a stock server's `jit = on` was estimated over
//!   `jit_above_cost` on a backlog of one destination and compiled for
//!   five seconds at every run;
//! - LISTEN and `remit migrate`'s advisory lock: over `direct_url`, a URL
//!   of PostgreSQL itself; without one, wake-ups come from polling and
//!   `remit migrate` is refused.

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

/// What stands between remit and PostgreSQL (`database.pooler`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pooler {
    /// PostgreSQL itself.
    #[default]
    None,
    /// A pooler that keeps a server for each client session.
    Session,
    /// A pooler that hands out a server per transaction.
    Transaction,
}

/// Fills tokio-postgres's cache of remit's own types on a new connection
/// behind a transaction pooler.
///
/// A result column of a type that is not built in (the ENUMs) makes
/// tokio-postgres look the type up with a named statement of its own,
/// which a transaction pooler may send to another server. Asked here
/// inside one transaction, the lookups run on one server, and the
/// statements they prepared there (those prepared since the transaction
/// began) are closed before it ends. Only those: other clients' statements
/// on the same server are theirs (a `DEALLOCATE ALL` broke PgBouncer 1.21's
/// own prepared statements, `max_prepared_statements`), and a pooler that
/// names the server's statements itself (`PGBOUNCER_…`) closes them itself.
pub(in crate::store::postgres) async fn warm_up(
    conn: &mut AsyncPgConnection,
) -> diesel::QueryResult<()> {
    use super::super::tables::enums::{OutcomeColumn, StateColumn};
    use super::super::tables::schema::sql_types::{AttemptOutcome, TaskState};
    use diesel::sql_types::{Array, Nullable};

    // Loaded, not executed: tokio-postgres looks the types of a result's
    // columns up only for rows it returns.
    #[derive(QueryableByName)]
    #[allow(dead_code)]
    struct Types {
        #[diesel(sql_type = Nullable<TaskState>)]
        state: Option<StateColumn>,
        #[diesel(sql_type = Nullable<AttemptOutcome>)]
        outcome: Option<OutcomeColumn>,
        #[diesel(sql_type = Nullable<Array<TaskState>>)]
        states: Option<Vec<StateColumn>>,
        #[diesel(sql_type = Nullable<Array<AttemptOutcome>>)]
        outcomes: Option<Vec<OutcomeColumn>>,
    }

    #[derive(QueryableByName)]
    struct Present {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        present: bool,
    }

    conn.batch_execute("BEGIN").await?;
    // A database remit has not migrated yet has no types to look up; the
    // schema check says what to do about it.
    let present = diesel::sql_query(
        "SELECT to_regtype('task_state') IS NOT NULL \
         AND to_regtype('attempt_outcome') IS NOT NULL AS present",
    )
    .get_result::<Present>(conn)
    .await;
    if !matches!(present, Ok(Present { present: true })) {
        conn.batch_execute("ROLLBACK").await?;
        return present.map(drop);
    }
    let types = diesel::sql_query(
        "SELECT NULL::task_state AS state, NULL::attempt_outcome AS outcome, \
         NULL::task_state[] AS states, NULL::attempt_outcome[] AS outcomes",
    )
    .load::<Types>(conn)
    .await;
    if types.is_ok() {
        close_own_statements(conn).await?;
    }
    let end = if types.is_ok() { "COMMIT" } else { "ROLLBACK" };
    conn.batch_execute(end).await?;
    types.map(drop)
}

/// Closes the statements this transaction prepared on its server, unless
/// the pooler names them itself (and so tracks and closes them).
async fn close_own_statements(conn: &mut AsyncPgConnection) -> diesel::QueryResult<()> {
    #[derive(QueryableByName)]
    struct Prepared {
        #[diesel(sql_type = Text)]
        name: String,
    }
    let own: Vec<Prepared> = diesel::sql_query(
        "SELECT name FROM pg_prepared_statements WHERE prepare_time >= now() AND NOT from_sql",
    )
    .load(conn)
    .await?;
    if own.iter().any(|p| p.name.starts_with("PGBOUNCER_")) {
        return Ok(());
    }
    for statement in own {
        // Quoted as an identifier: the name came from the catalogue.
        let name = statement.name.replace('"', "\"\"");
        conn.batch_execute(&format!("DEALLOCATE \"{name}\""))
            .await?;
    }
    Ok(())
}
