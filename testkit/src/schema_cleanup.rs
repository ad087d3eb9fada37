//! The PostgreSQL schemas tests make, and how they are sure to go: each
//! is stamped with when it was made; a test's own is dropped when it ends,
//! pass or fail, even when a connection left inside a transaction holds
//! locks on it (its holders are ended first); and a schema left behind by
//! a test binary that never ended (killed, timed out) is swept by the next
//! run, once it is older than any run could be.

use std::sync::atomic::{AtomicBool, Ordering};

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// Older than this, a test schema belongs to no run still going.
const STALE_AFTER_SECONDS: i64 = 6 * 3600;

/// How long a drop waits for locks before it ends their holders.
const LOCK_WAIT: &str = "5s";

static SWEPT: AtomicBool = AtomicBool::new(false);

/// Makes `schema`, stamped with the server's now.
pub async fn create(admin: &mut AsyncPgConnection, schema: &str) {
    diesel::sql_query(format!("CREATE SCHEMA {schema}"))
        .execute(admin)
        .await
        .unwrap();
    diesel::sql_query(format!(
        "DO $$ BEGIN EXECUTE format('COMMENT ON SCHEMA {schema} IS %L', \
         extract(epoch FROM now())::bigint::text); END $$"
    ))
    .execute(admin)
    .await
    .unwrap();
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

/// Drops the test schemas older than [`STALE_AFTER_SECONDS`], once per
/// process: what earlier runs that were killed left behind.
pub async fn sweep_stale(admin: &mut AsyncPgConnection) {
    if SWEPT.swap(true, Ordering::SeqCst) {
        return;
    }
    drop_stale(admin).await;
}

/// Drops every test schema older than [`STALE_AFTER_SECONDS`].
pub async fn drop_stale(admin: &mut AsyncPgConnection) {
    // The cast only where the stamp is a number (a CASE, so PostgreSQL
    // cannot try it first); schemas without a stamp are left alone.
    let stale: Vec<Name> = diesel::sql_query(format!(
        "SELECT nspname AS name FROM pg_namespace \
         WHERE nspname LIKE 'remit\\_test\\_%' \
           AND CASE WHEN coalesce(obj_description(oid, 'pg_namespace'), '') ~ '^[0-9]{{1,18}}$' \
                    THEN obj_description(oid, 'pg_namespace')::bigint \
                         < extract(epoch FROM now())::bigint - {STALE_AFTER_SECONDS} \
                    ELSE false END"
    ))
    .load(admin)
    .await
    .unwrap_or_default();
    for Name { name } in stale {
        drop_schema(admin, &name).await;
    }
}

/// Drops `schema` and everything in it. When locks stand in the way (a
/// connection of the test left inside a transaction, a child process
/// stopped mid-statement), the sessions holding locks on its tables are
/// ended and the drop tried again; answers whether the schema is gone.
pub async fn drop_schema(conn: &mut AsyncPgConnection, schema: &str) -> bool {
    let _ = diesel::sql_query(format!("SET lock_timeout = '{LOCK_WAIT}'"))
        .execute(conn)
        .await;
    for _ in 0..3 {
        // The name quoted as an identifier: a schema read from the catalog
        // may be spelt any way.
        let dropped = diesel::sql_query(format!(
            "DROP SCHEMA IF EXISTS {} CASCADE",
            quote_ident(schema)
        ))
        .execute(conn)
        .await;
        if dropped.is_ok() {
            return true;
        }
        let _ = diesel::sql_query(
            "SELECT pg_terminate_backend(pid) FROM ( \
               SELECT DISTINCT l.pid FROM pg_locks l \
               JOIN pg_class c ON c.oid = l.relation \
               JOIN pg_namespace n ON n.oid = c.relnamespace \
               WHERE n.nspname = $1 AND l.pid <> pg_backend_pid() \
                 AND l.database = (SELECT oid FROM pg_database \
                                   WHERE datname = current_database())) holders",
        )
        .bind::<Text, _>(schema)
        .execute(conn)
        .await;
    }
    false
}

/// `name` as a PostgreSQL identifier, in double quotes.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
