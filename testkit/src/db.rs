//! A database of its own for each test: a fresh PostgreSQL schema or a
//! SQLite file, migrated, removed when the test ends. Tests run in parallel
//! against one server.
//!
//! Shared by the store's tests and the runtime's (`actors/tests`); not
//! every test binary uses every helper.

use chrono::{DateTime, Duration, TimeZone, Utc};
use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use remit::domain::{
    AttemptRecord, DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TenantId,
};
use remit::payload_crypto::PayloadKey;
use remit::policy::{Decision, Transition};
use remit::store::{
    ClaimRequest, Clock, Database, DatabaseConfig, Destinations, Leases, PgStore, Schedule,
};

pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// How soon a connection that cannot work must be refused, for the tests
/// that check it fails at once rather than waiting out the store's 5 s
/// connect timeout or retrying: under that timeout, with room for a
/// machine busy with the rest of the suite.
pub const FAILS_FAST: std::time::Duration = std::time::Duration::from_secs(4);

/// The instant every test's clock starts at.
pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap()
}

pub fn database_url() -> String {
    std::env::var("DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.to_owned())
}

pub fn test_key() -> PayloadKey {
    PayloadKey::from_bytes([7; 32])
}

/// `url` with every connection's search_path set to `schema`.
fn in_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// The stores a test can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Postgres, Backend::Sqlite];
}

/// A database of the test's own: a schema of the PostgreSQL server at
/// DATABASE_URL, or a SQLite file in a directory of its own. Either is
/// removed when the test ends.
pub struct TestDb {
    pub store: Database,
    pub url: String,
    place: Place,
}

enum Place {
    /// A schema of the server at `base`.
    Schema {
        name: String,
        base: String,
    },
    Dir(std::path::PathBuf),
}

/// A connection to `url`, with TLS as the URL asks and the session
/// settings of a store's pool, so a plan a test reads is the one the store
/// would run.
pub async fn connect(url: &str) -> AsyncPgConnection {
    remit::store::PgConnector::new(url, std::time::Duration::from_secs(5))
        .unwrap()
        .for_store()
        .establish()
        .await
        .unwrap_or_else(|e| panic!("{}", remit::error_chain(&e)))
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl TestDb {
    /// A migrated PostgreSQL schema with a store whose clock is pinned at
    /// [`t0`].
    pub async fn new() -> Self {
        Self::on(Backend::Postgres).await
    }

    /// A migrated SQLite file with a store whose clock is pinned at [`t0`].
    pub async fn sqlite() -> Self {
        Self::on(Backend::Sqlite).await
    }

    /// A migrated database of `backend` with its clock pinned at [`t0`].
    pub async fn on(backend: Backend) -> Self {
        let mut db = Self::open(backend, 4).await;
        db.store = db.store.clone().with_clock(Clock::pinned(t0()));
        db
    }

    /// A migrated PostgreSQL schema whose store uses the database's clock,
    /// for tests of the running system.
    pub async fn with_database_clock() -> Self {
        Self::open(Backend::Postgres, 8).await
    }

    /// As [`TestDb::with_database_clock`], on `backend` (SQLite's clock is
    /// the host's).
    pub async fn running_on(backend: Backend) -> Self {
        Self::open(backend, 8).await
    }

    pub async fn with_pool(pool_size: u32) -> Self {
        let mut db = Self::open(Backend::Postgres, pool_size).await;
        db.store = db.store.clone().with_clock(Clock::pinned(t0()));
        db
    }

    /// A migrated schema of the PostgreSQL at `base` (a cluster of the
    /// test's own, say), whose store uses the database's clock.
    pub async fn in_cluster(base: &str) -> Self {
        Self::open_at(Backend::Postgres, 8, base).await
    }

    async fn open(backend: Backend, pool_size: u32) -> Self {
        Self::open_at(backend, pool_size, &database_url()).await
    }

    async fn open_at(backend: Backend, pool_size: u32, base: &str) -> Self {
        let (url, place) = match backend {
            Backend::Postgres => {
                let schema = format!("remit_test_{}", uuid::Uuid::new_v4().simple());
                let mut admin = connect(base).await;
                crate::schema_cleanup::sweep_stale(&mut admin).await;
                crate::schema_cleanup::create(&mut admin, &schema).await;
                let place = Place::Schema {
                    name: schema.clone(),
                    base: base.to_owned(),
                };
                (in_schema(base, &schema), place)
            }
            Backend::Sqlite => {
                let dir = std::env::temp_dir()
                    .join(format!("remit-test-{}", uuid::Uuid::new_v4().simple()));
                std::fs::create_dir_all(&dir).unwrap();
                let url = format!("sqlite://{}", dir.join("remit.db").display());
                (url, Place::Dir(dir))
            }
        };
        remit::store::migrate(&url).await.unwrap();
        let mut config = DatabaseConfig::new(url.clone());
        config.pool_size = pool_size;
        let store = Database::connect(&config, test_key()).await.unwrap();
        Self { store, url, place }
    }

    pub fn backend(&self) -> Backend {
        match self.place {
            Place::Schema { .. } => Backend::Postgres,
            Place::Dir(_) => Backend::Sqlite,
        }
    }

    pub fn clock(&self) -> &Clock {
        self.store.clock()
    }

    /// The PostgreSQL store, for tests of what only it has.
    pub fn pg(&self) -> &PgStore {
        match &self.store {
            Database::Postgres(pg) => pg,
            other => panic!("this test needs PostgreSQL, not {}", other.kind()),
        }
    }

    /// A second store on the same database (another process, as far as
    /// the database can tell) sharing this one's clock.
    pub async fn another_store(&self, key: PayloadKey) -> Database {
        Database::connect(&DatabaseConfig::new(self.url.clone()), key)
            .await
            .unwrap()
            .with_clock(self.clock().clone())
    }

    pub async fn conn(&self) -> AsyncPgConnection {
        assert_eq!(self.backend(), Backend::Postgres, "conn() is PostgreSQL's");
        connect(&self.url).await
    }

    fn sqlite_conn(&self) -> diesel::SqliteConnection {
        use diesel::Connection as _;
        let path = self.url.trim_start_matches("sqlite://");
        let mut conn = diesel::SqliteConnection::establish(path).unwrap();
        diesel::RunQueryDsl::execute(diesel::sql_query("PRAGMA busy_timeout = 10000"), &mut conn)
            .unwrap();
        conn
    }

    pub async fn execute(&self, sql: &str) -> usize {
        self.try_execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// As `execute`, answering the database's refusal instead of failing.
    pub async fn try_execute(&self, sql: &str) -> Result<usize, diesel::result::Error> {
        match self.backend() {
            Backend::Postgres => diesel::sql_query(sql).execute(&mut self.conn().await).await,
            Backend::Sqlite => {
                diesel::RunQueryDsl::execute(diesel::sql_query(sql), &mut self.sqlite_conn())
            }
        }
    }

    /// Runs a query of the form `SELECT count(*) AS n ...`.
    pub async fn count(&self, sql: &str) -> i64 {
        match self.backend() {
            Backend::Postgres => {
                diesel::sql_query(sql)
                    .get_result::<Count>(&mut self.conn().await)
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e}"))
                    .n
            }
            Backend::Sqlite => {
                diesel::RunQueryDsl::get_result::<Count>(
                    diesel::sql_query(sql),
                    &mut self.sqlite_conn(),
                )
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .n
            }
        }
    }

    pub async fn destination(&self, id: &str, region: Region) -> DestinationId {
        let id = DestinationId::new(id).unwrap();
        self.store
            .add_destination(
                NewDestination::new(id.clone(), region, "http://127.0.0.1:9/hook", None).unwrap(),
            )
            .await
            .unwrap();
        id
    }

    /// Claims for `lease_owner` with a 30 s lease.
    pub async fn claim(
        &self,
        region: Region,
        lease_owner: &str,
        limit: u32,
    ) -> Vec<remit::domain::ClaimedTask> {
        self.store
            .claim_due(&claim(region, lease_owner, limit))
            .await
            .unwrap()
    }

    /// Schedules a task due at [`t0`] and returns its id.
    pub async fn task(
        &self,
        reminder: &str,
        destination: &DestinationId,
        region: Region,
    ) -> remit::domain::TaskId {
        self.store
            .schedule(new_task(reminder, destination, region))
            .await
            .unwrap()
            .task
            .id
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let (schema, base) = match &self.place {
            Place::Dir(dir) => {
                let _ = std::fs::remove_dir_all(dir);
                return;
            }
            Place::Schema { name, base } => (name.clone(), base.clone()),
        };
        // Drop runs inside the test's runtime; a thread of its own with a
        // small runtime can block on the cleanup.
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let connector =
                    remit::store::PgConnector::new(&base, std::time::Duration::from_secs(5));
                let conn = match connector {
                    Ok(connector) => connector.establish().await.ok(),
                    Err(_) => None,
                };
                if let Some(mut conn) = conn {
                    // The test's own pool is still open while this runs: a
                    // connection of it left inside a transaction (a runtime
                    // stopped mid-statement) would hold the drop up forever,
                    // so its holders are ended after a short wait.
                    if !crate::schema_cleanup::drop_schema(&mut conn, &schema).await {
                        eprintln!(
                            "test schema {schema} could not be dropped; the next run sweeps it"
                        );
                    }
                }
            });
        });
        let _ = done.join();
    }
}

pub fn new_task(reminder: &str, destination: &DestinationId, region: Region) -> NewTask {
    NewTask {
        traceparent: None,
        tenant_id: TenantId::new("clinic-1").unwrap(),
        reminder_id: ReminderId::new(reminder).unwrap(),
        destination_id: destination.clone(),
        region,
        not_before: t0(),
        retry_horizon: Duration::days(3),
        payload: Payload::json(format!(r#"{{"reminder":"{reminder}","dob":"1970-01-01"}}"#)),
        ordering_key: None,
    }
}

pub fn claim(region: Region, lease_owner: &str, limit: u32) -> ClaimRequest {
    ClaimRequest {
        region,
        lease_owner: lease_owner.to_owned(),
        lease: Duration::seconds(30),
        limit,
        per_destination_cap: limit,
        caps: Vec::new(),
        skip: Vec::new(),
        resume_after: None,
    }
}

/// The decision the policy makes for a delivery, `record` logged with it:
/// what a test hands [`Leases::finish`] to deliver a task.
pub fn delivered(record: AttemptRecord) -> Decision {
    Decision {
        transition: Transition::Deliver,
        pause_destination_until: None,
        record,
    }
}

/// A retry due at `at` on `clock`. A decision carries its retry as a delay
/// from the response's receipt, which a store adds to its own now; a
/// record that says nothing of its receipt is taken to be received now.
pub fn retry_at(clock: &Clock, at: DateTime<Utc>, mut record: AttemptRecord) -> Decision {
    let now = clock.now_param().unwrap_or_else(Utc::now);
    record.received_at.get_or_insert(now);
    Decision {
        transition: Transition::RetryWait { available_at: at },
        pause_destination_until: None,
        record,
    }
}
