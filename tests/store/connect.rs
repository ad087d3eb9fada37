//! A database that cannot be used says why at once: a closed port, an
//! unknown database or role, a schema older or newer than the binary. Each
//! answer comes well inside the pool's 5 s wait for a connection.

use remit::store::{
    ConnectFailure, Database, DatabaseConfig, Reports, SchemaMismatch, StoreError, Upkeep,
};
use std::time::{Duration, Instant};

use crate::cluster::free_port;
use crate::support::{database_url, test_key, Backend, TestDb};

/// `url` with its database, role or port replaced.
fn with(part: &str, value: &str) -> String {
    let mut url = url::Url::parse(&database_url()).unwrap();
    match part {
        "database" => url.set_path(&format!("/{value}")),
        "role" => url.set_username(value).unwrap(),
        "port" => url.set_port(Some(value.parse().unwrap())).unwrap(),
        _ => unreachable!(),
    }
    url.to_string()
}

/// Connecting to `url` fails at once (`FAILS_FAST`); returns the failure and
/// the text a CLI command prints.
async fn fails_fast(config: DatabaseConfig) -> (StoreError, String) {
    let started = Instant::now();
    let err = match Database::connect(&config, test_key()).await {
        Ok(_) => panic!("connected"),
        Err(e) => e,
    };
    let took = started.elapsed();
    let text = remit::error_chain(&err);
    assert!(
        took < remit_testkit::db::FAILS_FAST,
        "took {took:?}: {text}"
    );
    eprintln!("{took:?}: {text}");
    (err, text)
}

async fn fails_fast_at(url: &str) -> (StoreError, String) {
    fails_fast(DatabaseConfig::new(url)).await
}

#[tokio::test]
async fn a_closed_port_is_named_as_unreachable() {
    let url = with("port", &free_port().to_string());
    let (err, text) = fails_fast_at(&url).await;
    assert!(
        matches!(&err, StoreError::Connect { cause, .. } if matches!(cause.downcast_ref::<ConnectFailure>(), Some(ConnectFailure::Unreachable(_)))),
        "{text}"
    );
    assert!(
        text.starts_with("could not connect to PostgreSQL at postgres://"),
        "{text}"
    );
    assert!(
        text.contains("could not be reached") && text.contains("refused"),
        "{text}"
    );
    // `migrate` says the same.
    let err = remit::store::migrate(&url).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Connect { cause, .. } if matches!(cause.downcast_ref::<ConnectFailure>(), Some(ConnectFailure::Unreachable(_))))
    );
}

#[tokio::test]
async fn an_unknown_database_is_named() {
    let (err, text) = fails_fast_at(&with("database", "remit_no_such_database")).await;
    assert!(
        matches!(&err, StoreError::Connect { cause, .. } if matches!(cause.downcast_ref::<ConnectFailure>(), Some(ConnectFailure::UnknownDatabase(_)))),
        "{text}"
    );
    assert!(
        text.contains("database \"remit_no_such_database\" does not exist"),
        "{text}"
    );
}

#[tokio::test]
async fn an_unknown_role_is_a_refused_login() {
    let (err, text) = fails_fast_at(&with("role", "remit_no_such_role")).await;
    assert!(
        matches!(&err, StoreError::Connect { cause, .. } if matches!(cause.downcast_ref::<ConnectFailure>(), Some(ConnectFailure::Authentication(_)))),
        "{text}"
    );
    assert!(
        text.contains("role \"remit_no_such_role\" does not exist"),
        "{text}"
    );
}

#[tokio::test]
async fn a_password_never_appears_in_the_message() {
    let mut url = url::Url::parse(&with("port", &free_port().to_string())).unwrap();
    url.set_password(Some("hunter2")).unwrap();
    let (_, text) = fails_fast_at(url.as_str()).await;
    assert!(!text.contains("hunter2"), "{text}");
}

#[tokio::test]
async fn an_empty_schema_asks_for_remit_migrate() {
    use diesel_async::RunQueryDsl as _;
    let schema = format!("remit_test_empty_{}", uuid::Uuid::new_v4().simple());
    let base = database_url();
    let mut admin = crate::support::connect(&base).await;
    // Stamped, so a run that fails before the drop below leaves it to
    // the next run's sweep.
    remit_testkit::schema_cleanup::create(&mut admin, &schema).await;
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
    let (err, text) = fails_fast_at(&url).await;
    diesel::sql_query(format!("DROP SCHEMA {schema}"))
        .execute(&mut admin)
        .await
        .unwrap();
    assert!(
        matches!(err, StoreError::Schema(SchemaMismatch::Empty)),
        "{text}"
    );
    assert!(text.contains("run `remit migrate`"), "{text}");
}

#[tokio::test]
async fn an_older_schema_asks_for_remit_migrate() {
    let db = TestDb::new().await;
    db.execute(
        "DELETE FROM __diesel_schema_migrations
          WHERE version = (SELECT max(version) FROM __diesel_schema_migrations)",
    )
    .await;
    let (err, text) = fails_fast_at(&db.url).await;
    assert!(
        matches!(err, StoreError::Schema(SchemaMismatch::Older { .. })),
        "{text}"
    );
    assert!(
        text.contains("older than this build") && text.contains("run `remit migrate`"),
        "{text}"
    );
}

#[tokio::test]
async fn a_newer_schema_says_the_binary_is_older() {
    for backend in Backend::ALL {
        let db = TestDb::on(backend).await;
        db.execute("INSERT INTO __diesel_schema_migrations (version) VALUES ('29991231000001')")
            .await;
        let (err, text) = fails_fast_at(&db.url).await;
        assert!(
            matches!(&err, StoreError::Schema(SchemaMismatch::Newer { unknown }) if unknown == &["29991231000001"]),
            "{backend:?}: {text}"
        );
        assert!(text.contains("binary is older than the schema"), "{text}");
        // A rollback may say it knows.
        let mut config = DatabaseConfig::new(db.url.clone());
        config.allow_newer_schema = true;
        Database::connect(&config, test_key()).await.unwrap();
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_named_after_the_timeout() {
    // The kernel completes the TCP handshake; nothing ever reads or writes.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = with("port", &silent.local_addr().unwrap().port().to_string());
    let mut config = DatabaseConfig::new(url);
    config.connect_timeout = Duration::from_millis(300);
    let (err, text) = fails_fast(config).await;
    assert!(
        matches!(&err, StoreError::Connect { cause, .. } if matches!(cause.downcast_ref::<ConnectFailure>(), Some(ConnectFailure::TimedOut(_)))),
        "{text}"
    );
    assert!(text.contains("did not answer within 300 ms"), "{text}");
}

/// A URL naming two hosts (a primary and its standby) whose first has gone
/// silent, its address dropping the connection's packets as a failed-over
/// primary's may: the store gives that host its connect timeout and
/// connects to the next, rather than spending the whole timeout on it.
#[tokio::test]
async fn a_silent_first_host_is_passed_over_for_the_next() {
    let db = TestDb::new().await;
    // A listener that never accepts, its queue filled: the kernel drops
    // every further SYN, as a host that is gone does.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap();
    let mut queued = Vec::new();
    while let Ok(stream) =
        std::net::TcpStream::connect_timeout(&silent_addr, Duration::from_millis(200))
    {
        queued.push(stream);
        assert!(queued.len() < 10_000, "the listener's queue never filled");
    }
    let real = url::Url::parse(&db.url).unwrap();
    let real_host = format!(
        "{}:{}",
        real.host_str().unwrap(),
        real.port().unwrap_or(5432)
    );
    let both = db
        .url
        .replacen(&real_host, &format!("{silent_addr},{real_host}"), 1);
    assert_ne!(both, db.url);
    let mut config = DatabaseConfig::new(both);
    config.connect_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let store = Database::connect(&config, test_key())
        .await
        .unwrap_or_else(|e| panic!("{}", remit::error_chain(&e)));
    eprintln!("connected past the silent host in {:?}", started.elapsed());
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "the silent host was tried first"
    );
    store.status(None).await.unwrap();
}

/// A pool whose server crashed serves again once the server is back: the
/// broken connections are dropped, not handed out forever.
#[tokio::test]
async fn the_pool_serves_again_once_a_crashed_server_is_back() {
    use crate::cluster::{Cluster, Tls};

    let Some(cluster) = Cluster::start(Tls::Off) else {
        return;
    };
    let url = cluster.url("127.0.0.1", "postgres", "");
    remit::store::migrate(&url).await.unwrap();
    let store = Database::connect(&DatabaseConfig::new(url), test_key())
        .await
        .unwrap();
    store.ping().await.unwrap();

    cluster.crash();
    assert!(store.ping().await.is_err(), "no server, no answer");
    cluster.resume();
    let back = Instant::now();
    while store.ping().await.is_err() {
        assert!(
            back.elapsed() < Duration::from_secs(10),
            "the pool never served again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[derive(diesel::QueryableByName)]
struct Planning {
    #[diesel(sql_type = diesel::sql_types::Text)]
    jit: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    seqscan: String,
}

/// A store's sessions plan without JIT and without sequential scans where
/// an index serves, whatever the server's defaults, unless the URL's own
/// `options` set them.
#[tokio::test]
async fn store_sessions_plan_without_jit_or_sequential_scans_unless_the_url_says_otherwise() {
    use diesel_async::RunQueryDsl;
    let base = database_url();
    let with = |options: &str| {
        let separator = if base.contains('?') { '&' } else { '?' };
        format!("{base}{separator}options={options}")
    };
    for (url, jit, seqscan) in [
        (base.clone(), "off", "off"),
        (with("-c%20statement_timeout%3D5000"), "off", "off"),
        (with("-c%20jit%3Don"), "on", "off"),
        (with("-c%20enable_seqscan%3Don"), "off", "on"),
    ] {
        let mut conn = crate::support::connect(&url).await;
        let shown: Planning = diesel::sql_query(
            "SELECT current_setting('jit') AS jit, current_setting('enable_seqscan') AS seqscan",
        )
        .get_result(&mut conn)
        .await
        .unwrap();
        assert_eq!(
            (shown.jit.as_str(), shown.seqscan.as_str()),
            (jit, seqscan),
            "{url}"
        );
    }
}

#[derive(diesel::QueryableByName)]
struct PlanCache {
    #[diesel(sql_type = diesel::sql_types::Text)]
    mode: String,
}

/// Delivery's sessions plan each prepared statement once, without its
/// values; a store's other sessions (the API's, the reports') plan for
/// the values each run asks, as the server would.
#[tokio::test]
async fn delivery_sessions_plan_each_statement_once_and_others_for_their_values() {
    use diesel_async::RunQueryDsl;
    let store = remit::store::PgConnector::new(&database_url(), Duration::from_secs(5))
        .unwrap()
        .for_store();
    for (connector, mode) in [
        (store.clone(), "auto"),
        (store.with_generic_plans(), "force_generic_plan"),
    ] {
        let mut conn = connector.establish().await.unwrap();
        let shown: PlanCache =
            diesel::sql_query("SELECT current_setting('plan_cache_mode') AS mode")
                .get_result(&mut conn)
                .await
                .unwrap();
        assert_eq!(shown.mode, mode);
    }
}
