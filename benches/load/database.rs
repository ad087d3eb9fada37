//! The empty database each run starts from, and what the run reads back
//! from PostgreSQL's statistics.
//!
//! With `DATABASE_URL=sqlite://` a run gets a SQLite file of its own in a
//! temporary directory instead, and reports no database statistics.
//!
//! A run gets a database of its own (`CREATE DATABASE remit_load_…`), so
//! `pg_stat_database` counts only its transactions. Where the role may not
//! create databases it falls back to a schema of its own in the given one
//! (as benches/claim_finish.rs does); the transaction count then includes
//! whatever else uses that database, and the report says so.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};

use crate::error::LoadError;
use crate::statements::{self, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    Database,
    Schema,
}

pub struct RunDatabase {
    /// The URL the run was given; the new database is created through it.
    base: String,
    /// The run's database (or the base one with the schema on its
    /// search_path).
    url: String,
    name: String,
    isolation: Isolation,
    keep: bool,
    /// The harness's one connection to the run's database, opened before
    /// any counting starts, so its statements are all it adds.
    conn: Mutex<Option<AsyncPgConnection>>,
    /// Statements this harness ran on the run's database, so they can be
    /// taken out of its transaction count.
    own_statements: AtomicU64,
    /// A second database, where pg_stat_statements is read (it answers
    /// only in a database that has the extension, and reading it in the
    /// run's own would count the reading); `None` where the server does
    /// not load the library or the run shares a database.
    observer: Option<(String, String)>,
    /// Set once [`Self::remove`] ran (or the run keeps its data).
    removed: bool,
    /// The run's directory, when it runs on a SQLite file.
    sqlite: Option<std::path::PathBuf>,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct StateCount {
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl RunDatabase {
    pub async fn create(base: &str, keep: bool) -> Result<Self, LoadError> {
        let name = format!("remit_load_{}", uuid::Uuid::new_v4().simple());
        if base.starts_with("sqlite:") {
            let dir = std::env::temp_dir().join(&name);
            std::fs::create_dir(&dir).map_err(LoadError::io("creating the run's directory"))?;
            return Ok(Self {
                base: base.to_owned(),
                url: format!("sqlite://{}", dir.join("remit.db").display()),
                name,
                isolation: Isolation::Database,
                keep,
                conn: Mutex::new(None),
                own_statements: AtomicU64::new(0),
                observer: None,
                removed: false,
                sqlite: Some(dir),
            });
        }
        let mut admin = AsyncPgConnection::establish(base).await?;
        let created = diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await;
        let (url, isolation) = match created {
            Ok(_) => (with_database(base, &name)?, Isolation::Database),
            Err(e) => {
                eprintln!(
                    "cannot create a database ({e}); using schema {name} in the given one \
                     (round trips then count every client of that database)"
                );
                let url = remit::store::create_schema(base, &name).await?;
                (url, Isolation::Schema)
            }
        };
        let conn = AsyncPgConnection::establish(&url).await?;
        let observer = match isolation {
            Isolation::Database => observer(base, &name).await,
            Isolation::Schema => None,
        };
        Ok(Self {
            base: base.to_owned(),
            url,
            name,
            isolation,
            keep,
            conn: Mutex::new(Some(conn)),
            own_statements: AtomicU64::new(0),
            observer,
            removed: false,
            sqlite: None,
        })
    }

    /// Whether the run is on a SQLite file (no statistics to read).
    pub fn is_sqlite(&self) -> bool {
        self.sqlite.is_some()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// A fresh schema inside the run's database, for the SQL-only ceiling.
    /// It goes when the database does (or with [`Self::drop`]).
    pub async fn new_schema(&self, prefix: &str) -> Result<(String, String), LoadError> {
        let schema = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let url = remit::store::create_schema(&self.base_of_schemas(), &schema).await?;
        Ok((schema, url))
    }

    /// Where new schemas go: the run's own database, without a search_path.
    fn base_of_schemas(&self) -> String {
        match self.isolation {
            Isolation::Database => self.url.clone(),
            Isolation::Schema => self.base.clone(),
        }
    }

    /// Committed and rolled-back transactions of the run's database so far,
    /// less the statements this harness ran there. Read over the base
    /// connection so the reading itself is not counted. Backends report
    /// their counts when idle or at exit, so read it after the runtime's
    /// processes have stopped and [`Self::settle`].
    pub async fn transactions(&self) -> Result<i64, LoadError> {
        if self.is_sqlite() {
            return Ok(0);
        }
        let mut conn = AsyncPgConnection::establish(&self.base).await?;
        let datname = match self.isolation {
            Isolation::Database => self.name.clone(),
            Isolation::Schema => database_name(&self.base)?,
        };
        let total = diesel::sql_query(
            "SELECT (xact_commit + xact_rollback)::int8 AS n FROM pg_stat_database WHERE datname = $1",
        )
        .bind::<Text, _>(datname)
        .get_result::<Count>(&mut conn)
        .await?
        .n;
        Ok(total - self.own())
    }

    /// Statements the harness has run on the run's database so far.
    fn own(&self) -> i64 {
        // RunQueryDsl's `load` would shadow the atomic's.
        i64::try_from(AtomicU64::load(&self.own_statements, Ordering::Relaxed)).unwrap_or(0)
    }

    /// Calls per statement so far, where pg_stat_statements answers.
    pub async fn statements(&self) -> Result<Option<Snapshot>, LoadError> {
        let Some((_, observer_url)) = &self.observer else {
            return Ok(None);
        };
        let snapshot = statements::snapshot(observer_url, &self.name, self.own()).await?;
        Ok(Some(snapshot))
    }

    /// Closes the harness's connection to the run's database (its backend
    /// reports its counts as it exits) and gives exiting backends a moment
    /// to do so.
    pub async fn settle(&self) {
        if self.is_sqlite() {
            return;
        }
        self.conn.lock().await.take();
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    /// The server's WAL position in bytes: the difference of two readings
    /// is the WAL written between them, by every database of the cluster
    /// (the throwaway cluster serves the run alone).
    pub async fn wal_position(&self) -> Result<i64, LoadError> {
        if self.is_sqlite() {
            return Ok(0);
        }
        let mut conn = AsyncPgConnection::establish(&self.base).await?;
        wal_position(&mut conn).await
    }

    /// Of the updates of `tasks` so far, the share PostgreSQL made HOT (no
    /// new index entry), as its statistics last reported them.
    pub async fn hot_update_share(&self) -> Result<Option<f64>, LoadError> {
        if self.is_sqlite() {
            return Ok(None);
        }
        let mut conn = self.conn().await?;
        hot_update_share(&mut conn).await
    }

    /// `n_dead_tup` of `tasks` as the statistics last reported it.
    pub async fn dead_tuples(&self) -> Result<i64, LoadError> {
        if self.is_sqlite() {
            return Ok(0);
        }
        let query = diesel::sql_query(
            "SELECT coalesce(sum(n_dead_tup), 0)::int8 AS n FROM pg_stat_user_tables
             WHERE schemaname = current_schema() AND relname = 'tasks'",
        );
        let mut conn = self.conn().await?;
        Ok(query.get_result::<Count>(&mut *conn).await?.n)
    }

    /// How many tasks are in each state.
    pub async fn states(&self) -> Result<BTreeMap<String, i64>, LoadError> {
        if let Some(dir) = &self.sqlite {
            use diesel::Connection as _;
            let path = dir.join("remit.db");
            let mut conn = diesel::SqliteConnection::establish(&path.display().to_string())
                .map_err(|e| LoadError::Setup(format!("opening {}: {e}", path.display())))?;
            let rows: Vec<StateCount> = diesel::RunQueryDsl::load(
                diesel::sql_query("SELECT state, count(*) AS n FROM tasks GROUP BY state"),
                &mut conn,
            )
            .map_err(|e| LoadError::Setup(format!("counting states: {e}")))?;
            return Ok(rows.into_iter().map(|r| (r.state, r.n)).collect());
        }
        let query = diesel::sql_query(
            "SELECT state::text AS state, count(*)::int8 AS n FROM tasks GROUP BY state",
        );
        let mut conn = self.conn().await?;
        let rows = query.load::<StateCount>(&mut *conn).await?;
        Ok(rows.into_iter().map(|r| (r.state, r.n)).collect())
    }

    /// Statistics for the planner, as a long-lived schedule has them; a
    /// table filled a moment ago has none until autovacuum gets to it.
    pub async fn analyze(&self) -> Result<(), LoadError> {
        if self.is_sqlite() {
            return Ok(());
        }
        let mut conn = self.conn().await?;
        diesel::sql_query("ANALYZE tasks")
            .execute(&mut *conn)
            .await?;
        Ok(())
    }

    /// The harness's connection (reopened after [`Self::settle`]), counting
    /// the statement about to run on it.
    async fn conn(&self) -> Result<MappedMutexGuard<'_, AsyncPgConnection>, LoadError> {
        let mut guard = self.conn.lock().await;
        if guard.is_none() {
            *guard = Some(AsyncPgConnection::establish(&self.url).await?);
        }
        self.own_statements.fetch_add(1, Ordering::Relaxed);
        Ok(MutexGuard::map(guard, |slot| {
            slot.as_mut().expect("opened above")
        }))
    }

    /// Drops the database (and the observer) or the schema, unless the run
    /// keeps it.
    pub async fn remove(mut self) -> Result<(), LoadError> {
        self.removed = true;
        if self.keep {
            eprintln!("kept the run's data: {}", self.url);
            return Ok(());
        }
        if let Some(dir) = &self.sqlite {
            return std::fs::remove_dir_all(dir)
                .map_err(LoadError::io("removing the run's directory"));
        }
        self.conn.lock().await.take();
        remove(&self.base, self.isolation, &self.names()).await
    }

    /// The run's database or schema, then the observer.
    fn names(&self) -> Vec<String> {
        let observer = self.observer.as_ref().map(|(name, _)| name.clone());
        std::iter::once(self.name.clone()).chain(observer).collect()
    }
}

impl Drop for RunDatabase {
    /// A run that failed midway still removes its database, on a thread
    /// and runtime of its own (a destructor cannot wait on async work).
    fn drop(&mut self) {
        if self.removed || self.keep {
            return;
        }
        if let Some(dir) = &self.sqlite {
            let _ = std::fs::remove_dir_all(dir);
            return;
        }
        self.conn.get_mut().take();
        let (base, isolation, names) = (self.base.clone(), self.isolation, self.names());
        let removed = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(LoadError::io("starting a runtime to clean up"))?;
            runtime.block_on(remove(&base, isolation, &names))
        })
        .join();
        if !matches!(removed, Ok(Ok(()))) {
            eprintln!("could not remove the run's data: {}", self.url);
        }
    }
}

async fn remove(base: &str, isolation: Isolation, names: &[String]) -> Result<(), LoadError> {
    match isolation {
        Isolation::Database => {
            let mut admin = AsyncPgConnection::establish(base).await?;
            for name in names {
                diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut admin)
                    .await?;
            }
        }
        Isolation::Schema => {
            for name in names {
                remit::store::drop_schema(base, name).await?;
            }
        }
    }
    Ok(())
}

/// A database `<run>_obs` with pg_stat_statements, when the server loads
/// the library; dropped again when it does not.
async fn observer(base: &str, run: &str) -> Option<(String, String)> {
    let name = format!("{run}_obs");
    let mut admin = AsyncPgConnection::establish(base).await.ok()?;
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut admin)
        .await
        .ok()?;
    let url = with_database(base, &name).ok()?;
    if statements::enable(&url).await {
        Some((name, url))
    } else {
        let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&mut admin)
            .await;
        None
    }
}

/// `base` pointing at database `name`, its other parts kept.
fn with_database(base: &str, name: &str) -> Result<String, LoadError> {
    let mut url = url::Url::parse(base)
        .map_err(|e| LoadError::Setup(format!("DATABASE_URL is not a URL: {e}")))?;
    url.set_path(&format!("/{name}"));
    Ok(url.to_string())
}

/// The database a URL names (PostgreSQL's default: the user's name).
fn database_name(base: &str) -> Result<String, LoadError> {
    let url = url::Url::parse(base)
        .map_err(|e| LoadError::Setup(format!("DATABASE_URL is not a URL: {e}")))?;
    let path = url.path().trim_start_matches('/');
    Ok(if path.is_empty() {
        url.username().to_owned()
    } else {
        path.to_owned()
    })
}

/// The server's WAL position on `conn`, in bytes from the start.
pub async fn wal_position(conn: &mut AsyncPgConnection) -> Result<i64, LoadError> {
    let query = diesel::sql_query("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::int8 AS n");
    Ok(query.get_result::<Count>(conn).await?.n)
}

#[derive(QueryableByName)]
struct Share {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Double>)]
    share: Option<f64>,
}

/// `n_tup_hot_upd / n_tup_upd` of `tasks` in the connection's schema.
pub async fn hot_update_share(conn: &mut AsyncPgConnection) -> Result<Option<f64>, LoadError> {
    let query = diesel::sql_query(
        "SELECT sum(n_tup_hot_upd)::float8 / nullif(sum(n_tup_upd), 0)::float8 AS share
         FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'tasks'",
    );
    Ok(query.get_result::<Share>(conn).await?.share)
}
