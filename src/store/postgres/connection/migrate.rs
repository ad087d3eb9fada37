//! The schema migrations, embedded in the binary.
//!
//! diesel's migration harness is synchronous, and diesel-async's own harness
//! blocks in place, which a current-thread runtime such as actix's forbids.
//! So migrations run on a blocking thread over the sync wrapper.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use diesel::RunQueryDsl as _;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use super::lock_holders::{blocking, lock_holders};
use crate::store::contract::{holders_to_text, AfterWait, LockPatience, LockWait, StoreError};
use crate::store::postgres::connection::connect::PgConnector;

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

/// An arbitrary constant: the advisory lock that keeps two processes from
/// migrating the same database at once.
const MIGRATION_LOCK: i64 = 0x7265_6d69_745f_6d67;

/// How long migrating waits for the server to answer a new connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one try of a migration in a transaction waits for a lock
/// (unless the migration sets a shorter one): what a claim or a finish
/// queued behind it waits at most.
const TRY_LOCK_TIMEOUT: Duration = Duration::from_secs(1);

/// What hears of each wait: a try that timed out, an index build that
/// goes on waiting.
pub type OnLockWait = Arc<dyn Fn(&LockWait) + Send + Sync>;

/// The shortest time between reports of an index build that waits.
const MIN_REPORT_EVERY: Duration = Duration::from_millis(100);

/// The index build under way, if any: what the watcher reports on.
type Building = Arc<Mutex<Option<(String, Instant)>>>;

/// The versions of the migrations this binary holds.
pub(crate) fn embedded_versions() -> Result<Vec<String>, StoreError> {
    crate::store::rules::schema_version::embedded_versions::<diesel::pg::Pg>(&MIGRATIONS)
}

/// Applies every pending migration, one at a time, and returns the
/// versions it applied; a migration whose locks are taken is tried again
/// (`patience`), each wait told to `on_wait`.
pub async fn migrate(
    database_url: &str,
    patience: LockPatience,
    on_wait: OnLockWait,
) -> Result<Vec<String>, StoreError> {
    // Connected here, on the runtime, with TLS as the URL asks; the
    // harness then drives it from a blocking thread, while a second
    // session here watches what an index build waits for.
    let connector = PgConnector::new(database_url, CONNECT_TIMEOUT)?;
    let mut conn = connector.establish().await?;
    let pid = backend_pid(&mut conn).await?;
    // Only for what it reports: a second session the server refuses (its
    // connection limit reached) costs the reports, not the migration.
    let watcher = match connector.establish().await {
        Ok(mut watcher) => name_session(&mut watcher, "remit migrate (watcher)")
            .await
            .ok()
            .map(|()| watcher),
        Err(_) => None,
    };
    let building = Building::default();
    let work = tokio::task::spawn_blocking({
        let (building, on_wait) = (building.clone(), on_wait.clone());
        move || migrate_blocking(conn, patience, on_wait, building)
    });
    tokio::select! {
        done = work => done
            .map_err(|e| StoreError::Migration(format!("migration thread failed: {e}")))?,
        never = watch_index_builds(watcher, pid, building, on_wait, patience.report_every) => {
            match never {}
        }
    }
}

/// Names this session in `pg_stat_activity`, unless the URL named it.
async fn name_session(conn: &mut AsyncPgConnection, name: &str) -> Result<(), StoreError> {
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(
            "SELECT set_config('application_name', $1, false) \
             WHERE current_setting('application_name') = ''",
        )
        .bind::<diesel::sql_types::Text, _>(name),
        conn,
    )
    .await?;
    Ok(())
}

async fn backend_pid(conn: &mut AsyncPgConnection) -> Result<i32, StoreError> {
    #[derive(diesel::QueryableByName)]
    struct Pid {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    let row: Pid = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query("SELECT pg_backend_pid() AS pid"),
        conn,
    )
    .await?;
    Ok(row.pid)
}

/// Every `every`, while an index is built, tells `on_wait` whom the
/// build waits for (it waits for every transaction under way on its
/// table, then for every older snapshot, which may take as long as the
/// longest), so that a `remit migrate` that seems stuck says why. A
/// failed look is skipped: it changes nothing of the migration.
async fn watch_index_builds(
    conn: Option<AsyncPgConnection>,
    pid: i32,
    building: Building,
    on_wait: OnLockWait,
    every: Duration,
) -> std::convert::Infallible {
    let Some(mut conn) = conn else {
        return std::future::pending().await;
    };
    loop {
        tokio::time::sleep(every.max(MIN_REPORT_EVERY)).await;
        let Some((migration, since)) = building.lock().clone() else {
            continue;
        };
        match blocking(&mut conn, pid).await {
            Ok(holders) if !holders.is_empty() => on_wait(&LockWait {
                migration,
                holders,
                next: AfterWait::KeepWaiting {
                    waited: since.elapsed(),
                },
            }),
            _ => {}
        }
    }
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
    "task_queue_late",
    "task_queue_horizon_unseen",
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

fn migrate_blocking(
    conn: AsyncPgConnection,
    patience: LockPatience,
    on_wait: OnLockWait,
    building: Building,
) -> Result<Vec<String>, StoreError> {
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(conn);
    // Named, so that an operator looking at pg_stat_activity (or at
    // another process's lock wait) sees what this session is; a name the
    // URL gives is kept.
    diesel::sql_query(
        "SELECT set_config('application_name', 'remit migrate', false) \
         WHERE current_setting('application_name') = ''",
    )
    .execute(&mut conn)?;
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
    let applied = apply_pending(&mut conn, patience, &on_wait, &building);
    diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})")).execute(&mut conn)?;
    applied
}

fn apply_pending(
    conn: &mut AsyncConnectionWrapper<AsyncPgConnection>,
    patience: LockPatience,
    on_wait: &OnLockWait,
    building: &Building,
) -> Result<Vec<String>, StoreError> {
    let pending = conn
        .pending_migrations(MIGRATIONS)
        .map_err(|e| StoreError::Migration(e.to_string()))?;
    let mut applied = Vec::with_capacity(pending.len());
    for migration in pending {
        let version = migration.name().version().to_string();
        // A migration in a transaction gives its locks up after a try; an
        // index built concurrently waits for transactions under way, which
        // stalls no one (its lock lets writes through), so it waits them out.
        let in_transaction = migration.metadata().run_in_transaction();
        let lock_timeout = if in_transaction {
            TRY_LOCK_TIMEOUT.as_millis()
        } else {
            0
        };
        diesel::sql_query(format!("SET lock_timeout = {lock_timeout}")).execute(conn)?;
        let started = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            if !in_transaction {
                *building.lock() = Some((version.clone(), started));
            }
            let ran = conn.run_migration(migration.as_ref());
            *building.lock() = None;
            let error = match ran {
                Ok(_) => break,
                Err(e) => e.to_string(),
            };
            if !in_transaction || !lost_to_a_lock(&error) {
                return Err(StoreError::Migration(error));
            }
            // Rolled back, nothing of it kept: who is in the way is looked
            // for now, while they still are. Not finding out is no reason
            // to stop.
            let holders = lock_holders(conn, TRY_LOCK_TIMEOUT / 2).unwrap_or_default();
            let next_try_in = TRY_LOCK_TIMEOUT * tries.min(MAX_PAUSE_IN_TRIES);
            if started.elapsed() + next_try_in > patience.give_up_after {
                let before = if applied.is_empty() {
                    String::new()
                } else {
                    format!(" (applied before it: {})", applied.join(", "))
                };
                return Err(StoreError::Migration(format!(
                    "migration {version} could not take its locks in {tries} tries over {} s; \
                     held by {}: end those transactions (or wait for them), then run \
                     `remit migrate` again{before}",
                    started.elapsed().as_secs(),
                    holders_to_text(&holders)
                )));
            }
            on_wait(&LockWait {
                migration: version.clone(),
                holders,
                next: AfterWait::TryAgain {
                    tries,
                    pause: next_try_in,
                },
            });
            // The writes that queued behind the try go through meanwhile.
            std::thread::sleep(next_try_in);
        }
        applied.push(version);
    }
    Ok(applied)
}

/// The longest pause between tries, in tries' lock timeouts: the pauses
/// grow from one to this, so a long holder is not hammered, nor a short
/// one waited for much longer than it holds.
const MAX_PAUSE_IN_TRIES: u32 = 5;

/// Whether a migration failed for a lock another session holds: it waited
/// longer than `lock_timeout` ("canceling statement due to lock timeout",
/// SQLSTATE 55P03), or it was chosen to break a deadlock with a session
/// that takes the same tables in another order ("deadlock detected",
/// 40P01). Rolled back, either is worth another try. diesel's migration
/// error keeps only the server's message, not its SQLSTATE, so this reads
/// the message, which servers send in English unless `lc_messages` says
/// otherwise (then a try that waited fails at once, as without retries).
fn lost_to_a_lock(error: &str) -> bool {
    error.contains("lock timeout") || error.contains("deadlock detected")
}
