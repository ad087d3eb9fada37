//! A database of its own for each test: a fresh schema, migrated, dropped
//! when the test ends. Tests run in parallel against one server.
//!
//! Shared by the store's tests and the runtime's (`actors/tests`), which
//! include it by path; not every test binary uses every helper.
#![allow(dead_code)]

use chrono::{DateTime, Duration, TimeZone, Utc};
use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use remit::domain::{
    DestinationId, NewDestination, NewTask, Payload, Region, ReminderId, TenantId,
};
use remit::payload_crypto::PayloadKey;
use remit::store::{ClaimRequest, Clock, PgConfig, PgStore, SqliteStore, Store};

pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

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

pub struct TestDb {
    pub store: PgStore,
    pub url: String,
    schema: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl TestDb {
    /// A migrated schema with a store whose clock is pinned at [`t0`].
    pub async fn new() -> Self {
        Self::with_pool(4).await
    }

    /// A migrated schema whose store uses the database's clock, for tests
    /// of the running system.
    pub async fn with_database_clock() -> Self {
        let mut db = Self::with_pool(8).await;
        db.store = db.store.clone().with_clock(Clock::database());
        db
    }

    pub async fn with_pool(pool_size: u32) -> Self {
        let schema = format!("remit_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = AsyncPgConnection::establish(&database_url())
            .await
            .expect("PostgreSQL must be reachable at DATABASE_URL");
        diesel::sql_query(format!("CREATE SCHEMA {schema}"))
            .execute(&mut admin)
            .await
            .unwrap();
        let url = in_schema(&database_url(), &schema);
        remit::store::migrate(&url).await.unwrap();
        let mut config = PgConfig::new(url.clone());
        config.pool_size = pool_size;
        let store = PgStore::connect(&config, test_key())
            .await
            .unwrap()
            .with_clock(Clock::pinned(t0()));
        Self { store, url, schema }
    }

    pub fn clock(&self) -> &Clock {
        self.store.clock()
    }

    /// A second store on the same schema (another process, as far as the
    /// database can tell) sharing this one's clock.
    pub async fn another_store(&self, key: PayloadKey) -> PgStore {
        PgStore::connect(&PgConfig::new(self.url.clone()), key)
            .await
            .unwrap()
            .with_clock(self.clock().clone())
    }

    pub async fn conn(&self) -> AsyncPgConnection {
        AsyncPgConnection::establish(&self.url).await.unwrap()
    }

    pub async fn execute(&self, sql: &str) -> usize {
        diesel::sql_query(sql)
            .execute(&mut self.conn().await)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Runs a query of the form `SELECT count(*) AS n ...`.
    pub async fn count(&self, sql: &str) -> i64 {
        diesel::sql_query(sql)
            .get_result::<Count>(&mut self.conn().await)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .n
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

    /// Claims for `consumer` with a 30 s lease.
    pub async fn claim(
        &self,
        region: Region,
        consumer: &str,
        limit: u32,
    ) -> Vec<remit::domain::ClaimedTask> {
        self.store
            .claim_due(&claim(region, consumer, limit))
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
        let schema = self.schema.clone();
        // Drop runs inside the test's runtime; a thread of its own with a
        // small runtime can block on the cleanup.
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                if let Ok(mut conn) = AsyncPgConnection::establish(&database_url()).await {
                    let _ = diesel::sql_query(format!("DROP SCHEMA {schema} CASCADE"))
                        .execute(&mut conn)
                        .await;
                }
            });
        });
        let _ = done.join();
    }
}

/// A SQLite file of its own for each test, in a directory removed when
/// the test ends.
pub struct LiteDb {
    pub store: SqliteStore,
    pub url: String,
    pub dir: std::path::PathBuf,
}

impl LiteDb {
    /// A migrated file with a store whose clock is pinned at [`t0`].
    pub async fn new() -> Self {
        let mut db = Self::with_database_clock().await;
        db.store = db.store.clone().with_clock(Clock::pinned(t0()));
        db
    }

    /// A migrated file whose store uses the host's clock.
    pub async fn with_database_clock() -> Self {
        let dir =
            std::env::temp_dir().join(format!("remit-test-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("remit.db");
        let url = format!("sqlite://{}", path.display());
        remit::store::migrate(&url).await.unwrap();
        let store = SqliteStore::open(&path, test_key()).await.unwrap();
        Self { store, url, dir }
    }
}

impl Drop for LiteDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn new_task(reminder: &str, destination: &DestinationId, region: Region) -> NewTask {
    NewTask {
        tenant_id: TenantId::new("clinic-1").unwrap(),
        reminder_id: ReminderId::new(reminder).unwrap(),
        destination_id: destination.clone(),
        region,
        not_before: t0(),
        retry_horizon: Duration::days(3),
        payload: Payload::json(format!(r#"{{"reminder":"{reminder}","dob":"1970-01-01"}}"#)),
    }
}

pub fn claim(region: Region, consumer: &str, limit: u32) -> ClaimRequest {
    ClaimRequest {
        region,
        consumer: consumer.to_owned(),
        lease: Duration::seconds(30),
        limit,
        per_destination_cap: limit,
        skip: Vec::new(),
        resume_after: None,
    }
}
