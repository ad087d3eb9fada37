//! PgBouncer of a test's own in front of a database of its own, as
//! production runs remit behind one: transaction pooling with fewer
//! server connections than clients (`default_pool_size = 2`), so
//! consecutive transactions of one client really land on different
//! servers.
//!
//! The database is created on the shared server (DATABASE_URL) with the
//! server's own settings (no role or database setting: remit needs none
//! behind a pooler), and dropped when the test ends. PgBouncer runs in the foreground (as `postgres`
//! when the test runs as root: it refuses root) on a free port of
//! 127.0.0.1, and is killed when dropped.
//!
//! Debian's `pgbouncer` (1.18) must be installed (`make test` installs it
//! as root); without it the test fails, unless REMIT_SKIP_PGBOUNCER=1
//! says to skip it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use diesel_async::RunQueryDsl as _;

const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

pub struct PgBouncer {
    dir: PathBuf,
    child: Child,
    pub port: u16,
    /// The URL of the pooler (a `remit_command!` reads `url`).
    pub url: String,
    /// The same database reached directly, without the pooler.
    pub direct_url: String,
    /// The shared server, for creating and dropping the database.
    base: String,
    database: String,
}

impl PgBouncer {
    /// Starts PgBouncer in transaction mode with two server connections
    /// in front of a new, empty database; `extra` lines go to its
    /// `[pgbouncer]` section. `None` only when PgBouncer is missing and
    /// REMIT_SKIP_PGBOUNCER=1.
    pub async fn start(extra: &str) -> Option<PgBouncer> {
        Self::start_in("transaction", 2, extra).await
    }

    /// As [`PgBouncer::start`], in `pool_mode` with `servers` server
    /// connections (a session pooler needs one per client connection).
    pub async fn start_in(pool_mode: &str, servers: u32, extra: &str) -> Option<PgBouncer> {
        let Some(program) = program() else {
            let skip = std::env::var("REMIT_SKIP_PGBOUNCER").is_ok_and(|v| v == "1");
            assert!(
                skip,
                "pgbouncer is not installed (PGBOUNCER, if set, names no file; no \
                 /usr/sbin/pgbouncer, none on PATH): install Debian's pgbouncer (`make test` does as root), or \
                 set REMIT_SKIP_PGBOUNCER=1 to skip the tests behind it"
            );
            eprintln!("\n*** SKIPPED: pgbouncer is not installed (REMIT_SKIP_PGBOUNCER=1) ***\n");
            return None;
        };
        let base = std::env::var("DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.into());
        let database = format!("remit_bouncer_{}", uuid::Uuid::new_v4().simple());
        let mut admin = admin(&base).await;
        diesel::sql_query(format!("CREATE DATABASE {database}"))
            .execute(&mut admin)
            .await
            .unwrap();
        let server = url::Url::parse(&base).unwrap();
        let host = server.host_str().unwrap_or("127.0.0.1").to_owned();
        let server_port = server.port().unwrap_or(5432);
        let user = match server.username() {
            "" => "postgres".to_owned(),
            user => user.to_owned(),
        };
        let password = server.password().unwrap_or("").to_owned();

        let dir =
            std::env::temp_dir().join(format!("remit-pgbouncer-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let mut target = format!("host={host} port={server_port} dbname={database} user={user}");
        if !password.is_empty() {
            target.push_str(&format!(" password={password}"));
        }
        std::fs::write(dir.join("users.txt"), format!("\"{user}\" \"\"\n")).unwrap();
        std::fs::write(
            dir.join("pgbouncer.ini"),
            format!(
                "[databases]\n{database} = {target}\n\n[pgbouncer]\n\
                 listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
                 auth_type = trust\nauth_file = {users}\n\
                 pool_mode = {pool_mode}\ndefault_pool_size = {servers}\nmax_client_conn = 200\n\
                 logfile = {log}\n{extra}\n",
                users = dir.join("users.txt").display(),
                log = dir.join("pgbouncer.log").display(),
            ),
        )
        .unwrap();

        let mut command = Command::new(&program);
        command
            .arg(dir.join("pgbouncer.ini"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some((uid, gid)) = postgres_ids_when_root() {
            use std::os::unix::process::CommandExt as _;
            let _ = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(&dir)
                .status();
            command.uid(uid).gid(gid);
        }
        let child = command.spawn().unwrap();
        let mut bouncer = PgBouncer {
            url: format!("postgres://{user}@127.0.0.1:{port}/{database}"),
            direct_url: {
                let mut direct = server.clone();
                direct.set_path(&format!("/{database}"));
                direct.to_string()
            },
            dir,
            child,
            port,
            base,
            database,
        };
        bouncer.wait_until_listening();
        Some(bouncer)
    }

    /// The name of the test's database.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// PgBouncer's log so far, for a failing assertion's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }

    fn wait_until_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("pgbouncer exited ({status}):\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "pgbouncer did not listen on 127.0.0.1:{} within 10 s:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
        let (base, database) = (self.base.clone(), self.database.clone());
        // Drop runs inside the test's runtime; a thread of its own with a
        // small runtime can block on the cleanup.
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let mut admin = admin(&base).await;
                let _ =
                    diesel::sql_query(format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
                        .execute(&mut admin)
                        .await;
            });
        });
        let _ = done.join();
    }
}

async fn admin(base: &str) -> diesel_async::AsyncPgConnection {
    remit::store::PgConnector::new(base, Duration::from_secs(5))
        .unwrap()
        .establish()
        .await
        .unwrap_or_else(|e| panic!("{}", remit::error_chain(&e)))
}

/// `PGBOUNCER` (the program, which must exist), else Debian's
/// `/usr/sbin/pgbouncer`, else `pgbouncer` on PATH.
fn program() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PGBOUNCER") {
        let path = PathBuf::from(path);
        return path.exists().then_some(path);
    }
    let debian = Path::new("/usr/sbin/pgbouncer");
    if debian.exists() {
        return Some(debian.to_owned());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("pgbouncer"))
            .find(|path| path.exists())
    })
}

/// The `postgres` user's uid and gid when this process is root (PgBouncer
/// refuses to run as root).
fn postgres_ids_when_root() -> Option<(u32, u32)> {
    let id = |args: &[&str]| -> Option<u32> {
        let out = Command::new("id").args(args).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id(&["-u"])? != 0 {
        return None;
    }
    Some((id(&["-u", "postgres"])?, id(&["-g", "postgres"])?))
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
