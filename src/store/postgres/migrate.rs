//! The schema migrations, embedded in the binary.
//!
//! diesel's migration harness is synchronous, and diesel-async's own harness
//! blocks in place, which a current-thread runtime such as actix's forbids.
//! So migrations run on a blocking thread over the sync wrapper.

use std::time::Duration;

use diesel::RunQueryDsl as _;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use super::{PgConnector, StoreError};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// An arbitrary constant: the advisory lock that keeps two processes from
/// migrating the same database at once.
const MIGRATION_LOCK: i64 = 0x7265_6d69_745f_6d67;

/// How long migrating waits for the server to answer a new connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The versions of the migrations this binary holds.
pub(crate) fn embedded_versions() -> Result<Vec<String>, StoreError> {
    super::schema_version::embedded_versions::<diesel::pg::Pg>(&MIGRATIONS)
}

/// Applies every pending migration and returns the versions it applied.
pub async fn migrate(database_url: &str) -> Result<Vec<String>, StoreError> {
    // Connected here, on the runtime, with TLS as the URL asks; the
    // harness then drives it from a blocking thread.
    let conn = PgConnector::new(database_url, CONNECT_TIMEOUT)?
        .establish()
        .await?;
    tokio::task::spawn_blocking(move || migrate_blocking(conn))
        .await
        .map_err(|e| StoreError::Migration(format!("migration thread failed: {e}")))?
}

/// How long a migration waits between tries for the lock another holds.
const LOCK_RETRY: Duration = Duration::from_millis(50);

#[derive(diesel::QueryableByName)]
struct Locked {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    locked: bool,
}

/// The indexes the migrations build concurrently. A build that failed
/// halfway (a cancel, a deadlock, a lost connection) leaves an invalid
/// index of its name, which `CREATE INDEX … IF NOT EXISTS` would take as
/// built; it is dropped first, so the migration builds it again.
const BUILT_CONCURRENTLY: &[&str] = &[
    "tasks_waiting_change",
    "tasks_cancelled",
    "task_queue_late_check",
    "tasks_horizon_check",
    "task_queue_retrying",
];

fn drop_failed_builds(
    conn: &mut AsyncConnectionWrapper<AsyncPgConnection>,
) -> Result<(), StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Invalid {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
    }
    let invalid: Vec<Invalid> = diesel::sql_query(
        "SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         WHERE NOT i.indisvalid AND c.relname = ANY($1) \
           AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
    )
    .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(BUILT_CONCURRENTLY)
    .load(conn)?;
    for index in invalid {
        // Quoted as an identifier: the name came from the catalogue.
        diesel::sql_query(format!(
            "DROP INDEX CONCURRENTLY IF EXISTS \"{}\"",
            index.name
        ))
        .execute(conn)?;
    }
    Ok(())
}

fn migrate_blocking(conn: AsyncPgConnection) -> Result<Vec<String>, StoreError> {
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(conn);
    // Tried, not waited for in a statement: an index built concurrently
    // (by the holder) waits for every statement under way in the database,
    // and one waiting here for the holder's lock would be a deadlock.
    loop {
        let tried: Locked = diesel::sql_query(format!(
            "SELECT pg_try_advisory_lock({MIGRATION_LOCK}) AS locked"
        ))
        .get_result(&mut conn)?;
        if tried.locked {
            break;
        }
        std::thread::sleep(LOCK_RETRY);
    }
    drop_failed_builds(&mut conn)?;
    let applied = conn
        .run_pending_migrations(MIGRATIONS)
        .map(|versions| versions.iter().map(ToString::to_string).collect())
        .map_err(|e| StoreError::Migration(e.to_string()));
    diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})")).execute(&mut conn)?;
    applied
}
