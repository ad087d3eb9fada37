//! Opening the SQLite file and migrating it.
//!
//! PRAGMAs are per connection, so every connection sets them: WAL (readers
//! never wait for the writer, and a commit is one append), a busy timeout
//! (a process waits for another's write lock instead of failing at once),
//! foreign keys on, `synchronous = FULL`, so a commit survives power
//! loss like PostgreSQL's, and `secure_delete`, so the bytes of a deleted
//! row (an erased payload, its data key with it) are overwritten with
//! zeros in the file rather than left in a free page; after an erasure the
//! WAL, which still holds the pages as they were, is checkpointed and
//! emptied when no other process is reading from it ([`scrub_wal`]).
//!
//! The file holds signing secrets and sealed payloads: it is created
//! readable by its owner only (0600), and SQLite gives its `-wal` and
//! `-shm` files the database file's mode.

use std::path::Path;

use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::store::contract::StoreError;

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

/// How long a write waits for another process's write lock.
const BUSY_TIMEOUT_MS: u32 = 10_000;

/// Opens `path` and sets the connection's PRAGMAs; with `create`, a file
/// that does not exist yet is created (only migration creates one).
pub(super) fn open(path: &Path, create: bool) -> Result<SqliteConnection, StoreError> {
    if !create && !path.exists() {
        return Err(StoreError::Open(diesel::ConnectionError::BadConnection(
            format!(
                "no SQLite database at {} (run `remit migrate` to create it)",
                path.display()
            ),
        )));
    }
    if create {
        create_owner_only(path)?;
    }
    let text = path.to_str().ok_or_else(|| {
        StoreError::Open(diesel::ConnectionError::InvalidConnectionUrl(
            "the SQLite path must be valid UTF-8".into(),
        ))
    })?;
    let mut conn = SqliteConnection::establish(text).map_err(|e| {
        StoreError::Open(diesel::ConnectionError::BadConnection(format!(
            "{}: {e}",
            path.display()
        )))
    })?;
    for pragma in [
        format!("PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}"),
        "PRAGMA journal_mode = WAL".to_owned(),
        "PRAGMA synchronous = FULL".to_owned(),
        "PRAGMA foreign_keys = ON".to_owned(),
        "PRAGMA secure_delete = ON".to_owned(),
    ] {
        diesel::sql_query(pragma).execute(&mut conn)?;
    }
    Ok(conn)
}

/// Copies the WAL into the file and empties it, so that the page images it
/// holds from before a deletion are gone from disk too. Best effort and
/// never waits: when another process is reading from the WAL (or writing),
/// it answers false and the pages are overwritten as the WAL is reused (or
/// at the next erasure's try). Outside any transaction.
pub(super) fn scrub_wal(conn: &mut SqliteConnection) -> Result<bool, StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Checkpoint {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        busy: i32,
    }
    diesel::sql_query("PRAGMA busy_timeout = 0").execute(conn)?;
    let done = diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)").get_result::<Checkpoint>(conn);
    diesel::sql_query(format!("PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")).execute(conn)?;
    Ok(done.is_ok_and(|c| c.busy == 0))
}

/// Creates an empty file (a valid empty database) readable and writable
/// by its owner only, unless one is there; SQLite would create it with the
/// umask's mode, usually readable by everyone.
fn create_owner_only(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt as _;

    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::Open(diesel::ConnectionError::BadConnection(
            format!("{}: {e}", path.display()),
        ))),
    }
}

/// Creates the file if needed and applies every pending migration, holding
/// the write lock so two processes never migrate it at once. Returns the
/// versions it applied.
pub fn migrate(path: &Path) -> Result<Vec<String>, StoreError> {
    let mut conn = open(path, true)?;
    conn.immediate_transaction(|conn| {
        conn.run_pending_migrations(MIGRATIONS)
            .map(|versions| versions.iter().map(ToString::to_string).collect())
            .map_err(|e| StoreError::Migration(e.to_string()))
    })
}

/// Refuses a file whose schema this build does not fit (after
/// [`migrate`], only a newer one can remain).
pub fn check_schema(path: &Path, allow_newer: bool) -> Result<(), StoreError> {
    let mut conn = open(path, false)?;
    let applied: Vec<String> = conn
        .applied_migrations()
        .map_err(|e| StoreError::Migration(e.to_string()))?
        .iter()
        .map(ToString::to_string)
        .collect();
    let embedded = crate::store::rules::schema_version::embedded_versions::<diesel::sqlite::Sqlite>(
        &MIGRATIONS,
    )?;
    crate::store::rules::schema_version::compare(&applied, &embedded, allow_newer)
        .map_err(StoreError::Schema)
}
