//! The tests' own schemas leave nothing behind: one is dropped when its
//! test ends even while a connection holds locks inside a transaction, and
//! a stale one a killed run left is swept.

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use remit_testkit::schema_cleanup;

use crate::support::{self, database_url, TestDb};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn schemas_named(name: &str) -> i64 {
    let mut admin = support::connect(&database_url()).await;
    diesel::sql_query(format!(
        "SELECT count(*) AS n FROM pg_namespace WHERE nspname = '{name}'"
    ))
    .get_result::<Count>(&mut admin)
    .await
    .unwrap()
    .n
}

#[tokio::test]
async fn a_test_s_schema_goes_even_while_a_transaction_holds_its_locks() {
    let db = TestDb::with_database_clock().await;
    let schema = db.url.split("search_path%3D").nth(1).unwrap().to_owned();
    // A connection left inside a transaction, holding a lock on a table of
    // the schema, as a runtime stopped mid-statement would.
    let mut holder = support::connect(&db.url).await;
    for statement in ["BEGIN", "LOCK TABLE tasks IN ACCESS SHARE MODE"] {
        diesel::sql_query(statement)
            .execute(&mut holder)
            .await
            .unwrap();
    }
    assert_eq!(schemas_named(&schema).await, 1);
    drop(db);
    assert_eq!(schemas_named(&schema).await, 0, "{schema} was left behind");
}

#[tokio::test]
async fn a_stale_schema_a_killed_run_left_is_swept() {
    let mut admin = support::connect(&database_url()).await;
    let stale = format!("remit_test_stale_{}", uuid::Uuid::new_v4().simple());
    let fresh = format!("remit_test_fresh_{}", uuid::Uuid::new_v4().simple());
    schema_cleanup::create(&mut admin, &stale).await;
    schema_cleanup::create(&mut admin, &fresh).await;
    // Made a day ago, as far as the stamp says.
    let day_ago = chrono::Utc::now().timestamp() - 86_400;
    diesel::sql_query(format!("COMMENT ON SCHEMA {stale} IS '{day_ago}'"))
        .execute(&mut admin)
        .await
        .unwrap();
    schema_cleanup::drop_stale(&mut admin).await;
    assert_eq!(schemas_named(&stale).await, 0, "the stale one is swept");
    assert_eq!(schemas_named(&fresh).await, 1, "a fresh one is kept");
    assert!(schema_cleanup::drop_schema(&mut admin, &fresh).await);
}
