//! A connection pooler in front of PostgreSQL (PgBouncer), and what remit
//! does differently behind one.
//!
//! A pooler in session mode gives each client a server for the whole
//! session: everything works, except that PgBouncer refuses the startup
//! parameter `options`, which remit uses to ask for `enable_seqscan=off`
//! and `jit=off`. In transaction mode it gives a server per transaction,
//! so whatever lives in a session goes another way:
//! - named prepared statements: each statement is sent unnamed, in one
//!   Parse/Bind/Describe/Execute/Sync (`set_unnamed_statements`, from the
//!   vendored diesel-async), and tokio-postgres's type cache is filled once
//!   per connection inside one transaction ([`warm_up`]);
//! - session settings: the server sets them for the role
//!   (`ALTER ROLE … IN DATABASE … SET`), checked at connect
//!   ([`check_settings`]);
//! - LISTEN and `remit migrate`'s advisory lock: over `direct_url`, a URL
//!   of PostgreSQL itself; without one, wake-ups come from polling and
//!   `remit migrate` is refused.

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

use super::StoreError;

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

/// A pooler, or its absence, that does not fit what the server says.
#[derive(Debug, thiserror::Error)]
pub enum PoolerError {
    /// `options` was accepted but not applied: PgBouncer with
    /// `ignore_startup_parameters = options` does this.
    #[error(
        "the session settings remit asks for at connect (enable_seqscan=off, jit=off) were not \
         applied (the server says enable_seqscan = {seqscan}): a connection pooler seems to be in \
         front; set database.pooler (\"transaction\" or \"session\") and database.direct_url to \
         PostgreSQL itself"
    )]
    SettingsIgnored { seqscan: String },
    /// Behind a pooler, the server must set `enable_seqscan` for the role.
    #[error(
        "behind a pooler remit cannot ask for enable_seqscan = off at connect, and the server \
         says {seqscan}: run `{remedy}` on PostgreSQL (a sequential scan of the queue makes a \
         claim take seconds)"
    )]
    SeqscanOn { seqscan: String, remedy: String },
    /// `options` in the URL cannot go through a pooler.
    #[error(
        "the URL sets `options`, which a pooler refuses: set those settings on the server \
         (ALTER ROLE … IN DATABASE … SET) instead"
    )]
    OptionsInUrl,
}

#[derive(QueryableByName)]
struct Settings {
    #[diesel(sql_type = Text)]
    seqscan: String,
    #[diesel(sql_type = Text)]
    jit: String,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Text)]
    database: String,
}

/// Checks that the session plans as remit's statements expect, whoever
/// set it: remit at connect (no pooler, when it `asked` for it), or the
/// server (behind one). Returns a warning to log when `jit` is on behind a
/// pooler.
pub(super) async fn check_settings(
    conn: &mut AsyncPgConnection,
    pooler: Pooler,
    asked: bool,
) -> Result<Option<String>, StoreError> {
    let settings: Settings = diesel::sql_query(
        "SELECT current_setting('enable_seqscan') AS seqscan, current_setting('jit') AS jit, \
         current_user::text AS role, current_database()::text AS database",
    )
    .get_result(conn)
    .await?;
    let remedy = |setting: &str| {
        format!(
            "ALTER ROLE \"{}\" IN DATABASE \"{}\" SET {setting} = off",
            settings.role, settings.database
        )
    };
    match pooler {
        Pooler::None if asked && settings.seqscan != "off" => {
            Err(StoreError::Pooler(PoolerError::SettingsIgnored {
                seqscan: settings.seqscan,
            }))
        }
        Pooler::None => Ok(None),
        _ if settings.seqscan != "off" => Err(StoreError::Pooler(PoolerError::SeqscanOn {
            remedy: remedy("enable_seqscan"),
            seqscan: settings.seqscan,
        })),
        _ if settings.jit != "off" => Ok(Some(format!(
            "behind a pooler remit cannot ask for jit = off at connect, and the server says {}: \
             run `{}` on PostgreSQL (a statement the planner overestimates is compiled for \
             seconds before it runs for milliseconds)",
            settings.jit,
            remedy("jit")
        ))),
        _ => Ok(None),
    }
}

/// Fills tokio-postgres's cache of remit's own types on a new connection
/// behind a transaction pooler.
///
/// A result column of a type that is not built in (the ENUMs) makes
/// tokio-postgres look the type up with a named statement of its own,
/// which a transaction pooler may send to another server. Asked here
/// inside one transaction, the lookups run on one server; the named
/// statements other clients left there are cleared first, and the
/// lookups' own after.
pub(super) async fn warm_up(conn: &mut AsyncPgConnection) -> diesel::QueryResult<()> {
    use super::enums::{OutcomeColumn, StateColumn};
    use super::schema::sql_types::{AttemptOutcome, TaskState};
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

    conn.batch_execute("BEGIN; DEALLOCATE ALL").await?;
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
    let end = match types {
        Ok(_) => "DEALLOCATE ALL; COMMIT",
        Err(_) => "ROLLBACK",
    };
    conn.batch_execute(end).await?;
    types.map(drop)
}
