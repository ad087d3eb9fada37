//! A command facing a database it cannot use says why, in well under the
//! pool's 5 s wait: nothing listening, an unknown database, a schema that
//! was never migrated.

use std::time::Instant;

use diesel_async::RunQueryDsl as _;

use crate::support::cluster::free_port;
use crate::support::db::{connect, database_url};
use crate::support::TestDb;

/// Runs `remit ARGS` against `url`; it must fail within a second with exit
/// status 1. Returns what it printed on stderr.
fn fails_fast(db: &TestDb, url: &str, args: &[&str]) -> String {
    let started = Instant::now();
    let output = crate::remit(db)
        .env("DATABASE_URL", url)
        .env("REMIT_API_TOKEN", crate::support::API_TOKEN)
        .args(args)
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(
        took < remit_testkit::db::FAILS_FAST,
        "{args:?} took {took:?}: {stderr}"
    );
    eprintln!("remit {args:?}: {took:?}: {stderr}");
    stderr
}

#[actix_rt::test]
async fn commands_name_what_is_wrong_with_the_database_at_once() {
    let db = TestDb::new().await;
    let mut url = url::Url::parse(&database_url()).unwrap();

    url.set_port(Some(free_port())).unwrap();
    let closed = url.to_string();
    let stderr = fails_fast(&db, &closed, &["status"]);
    assert!(
        stderr.contains("could not connect to PostgreSQL at")
            && stderr.contains("could not be reached"),
        "{stderr}"
    );
    let stderr = fails_fast(&db, &closed, &["migrate"]);
    assert!(stderr.contains("could not be reached"), "{stderr}");

    let mut unknown = url::Url::parse(&database_url()).unwrap();
    unknown.set_path("/remit_no_such_database");
    let stderr = fails_fast(&db, unknown.as_str(), &["status"]);
    assert!(
        stderr.contains("database \"remit_no_such_database\" does not exist"),
        "{stderr}"
    );

    let schema = format!("remit_test_empty_{}", uuid::Uuid::new_v4().simple());
    let base = database_url();
    let mut admin = connect(&base).await;
    // Stamped, so a run that fails before the drop below leaves it to
    // the next run's sweep.
    remit_testkit::schema_cleanup::create(&mut admin, &schema).await;
    let sep = if base.contains('?') { '&' } else { '?' };
    let empty = format!("{base}{sep}options=-c%20search_path%3D{schema}");
    let status = fails_fast(&db, &empty, &["status"]);
    let run = fails_fast(&db, &empty, &["run"]);
    diesel::sql_query(format!("DROP SCHEMA {schema}"))
        .execute(&mut admin)
        .await
        .unwrap();
    for stderr in [status, run] {
        assert!(
            stderr.contains("has no remit schema: run `remit migrate`"),
            "{stderr}"
        );
    }
}
