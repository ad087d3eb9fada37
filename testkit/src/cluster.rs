//! A throwaway PostgreSQL cluster of a test's own, for what the shared
//! server cannot show: TLS with a test CA, client certificates, a server
//! without TLS, a server that crashes and comes back, a primary with a
//! streaming standby that is promoted in its place. Started with the
//! installed PostgreSQL binaries (as the `postgres` user when the test
//! runs as root), on a free port of 127.0.0.1, and removed when dropped.
//!
//! With `Tls::On`, the cluster has `ssl = on` with a server certificate for
//! `localhost` only (not for 127.0.0.1) signed by the test CA, and its
//! pg_hba.conf accepts only `hostssl`: the role `remit_cert` must present a
//! client certificate signed by the same CA, any other role is trusted.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether the cluster speaks TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    On,
    Off,
}

/// The files of the test's CAs and certificates.
#[derive(Debug)]
pub struct Certs {
    /// The CA that signed the server's and the client's certificates.
    pub ca: PathBuf,
    /// A CA that signed nothing the cluster uses.
    pub other_ca: PathBuf,
    /// A client certificate for the role `remit_cert`, and its key.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    pub certs: Option<Certs>,
}

impl Cluster {
    /// Starts a cluster, or returns `None` after saying so loudly when no
    /// PostgreSQL binaries are installed (`/usr/lib/postgresql/*/bin`, or
    /// `PG_BIN`).
    pub fn start(tls: Tls) -> Option<Cluster> {
        let Some(bin) = binaries() else {
            eprintln!(
                "\n*** SKIPPED: no PostgreSQL binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin \
                 or PG_BIN: this test needs a cluster of its own ***\n"
            );
            return None;
        };
        let dir =
            std::env::temp_dir().join(format!("remit-cluster-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let certs = (tls == Tls::On).then(|| make_certs(&dir.join("certs")));
        let cluster = Cluster {
            dir,
            bin,
            port,
            certs,
        };
        cluster.init();
        Some(cluster)
    }

    /// A URL for `user` at `host` (`localhost` or `127.0.0.1`) with the
    /// query `params` (without the `?`).
    pub fn url(&self, host: &str, user: &str, params: &str) -> String {
        let query = if params.is_empty() {
            String::new()
        } else {
            format!("?{params}")
        };
        format!("postgres://{user}@{host}:{}/postgres{query}", self.port)
    }

    /// A `verify-full` URL for the superuser that trusts the test CA.
    pub fn verified_url(&self) -> String {
        let ca = &self.certs.as_ref().expect("a TLS cluster").ca;
        self.url(
            "localhost",
            "postgres",
            &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
        )
    }

    /// Cuts every session at once, with no checkpoint, as a crash of the
    /// server would (`pg_ctl stop -m immediate`).
    pub fn crash(&self) {
        let data = self.dir.join("data");
        self.run(
            "pg_ctl",
            &["-D", path(&data), "-m", "immediate", "-w", "stop"],
        );
    }

    /// Starts the server again and returns once it accepts connections.
    pub fn resume(&self) {
        let data = self.dir.join("data");
        let log = self.dir.join("log");
        self.run(
            "pg_ctl",
            &["-D", path(&data), "-w", "-l", path(&log), "start"],
        );
    }

    /// A streaming standby of this cluster, cloned with `pg_basebackup -R`
    /// and started on a port of its own; `name` is the `application_name`
    /// it replicates as (what `synchronous_standby_names` names). It is
    /// asynchronous until [`Cluster::make_synchronous`] says otherwise.
    pub fn standby(&self, name: &str) -> Cluster {
        let dir =
            std::env::temp_dir().join(format!("remit-standby-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let standby = Cluster {
            dir,
            bin: self.bin.clone(),
            port: free_port(),
            certs: None,
        };
        let data = standby.dir.join("data");
        let port = self.port.to_string();
        standby.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                path(&data),
                "-X",
                "stream",
                "-R",
                "--no-sync",
            ],
        );
        append(
            &data.join("postgresql.conf"),
            &format!(
                "port = {}\nunix_socket_directories = '{}'\ncluster_name = '{name}'\n",
                standby.port,
                standby.dir.display()
            ),
        );
        standby.resume();
        standby
    }

    /// Makes the standby `name` synchronous: from now on a commit returns
    /// once the standby has flushed it. Returns when the primary reports
    /// it so.
    pub fn make_synchronous(&self, name: &str) {
        self.query(&format!(
            "ALTER SYSTEM SET synchronous_standby_names = '{name}'"
        ));
        self.query("SELECT pg_reload_conf()");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let sql =
            format!("SELECT sync_state FROM pg_stat_replication WHERE application_name = '{name}'");
        while self.query(&sql) != "sync" {
            assert!(
                std::time::Instant::now() < deadline,
                "the standby {name} did not become synchronous"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Promotes a standby to primary and returns once it accepts writes.
    pub fn promote(&self) {
        let data = self.dir.join("data");
        self.run("pg_ctl", &["-D", path(&data), "-w", "promote"]);
    }

    /// Stops the server cleanly (`pg_ctl stop -m fast`).
    #[allow(dead_code)] // The runtime's tests stop a standby; the store's do not.
    pub fn stop(&self) {
        let data = self.dir.join("data");
        self.run("pg_ctl", &["-D", path(&data), "-m", "fast", "-w", "stop"]);
    }

    /// Runs `sql` as the superuser over the cluster's socket and answers
    /// its output, unaligned and trimmed.
    pub fn query(&self, sql: &str) -> String {
        let output = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-XtAqc", sql])
            .output()
            .expect("psql runs");
        assert!(
            output.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    fn init(&self) {
        let data = self.dir.join("data");
        self.run(
            "initdb",
            &[
                "-D",
                path(&data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        );
        let mut conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\nfsync = off\n",
            self.port,
            self.dir.display()
        );
        let hba = match &self.certs {
            Some(_) => {
                let certs = self.dir.join("certs");
                conf.push_str(&format!(
                    "ssl = on\nssl_cert_file = '{0}/server.crt'\nssl_key_file = '{0}/server.key'\nssl_ca_file = '{0}/ca.crt'\n",
                    certs.display()
                ));
                "local all all trust\n\
                 hostssl all remit_cert 127.0.0.1/32 cert\n\
                 hostssl all all 127.0.0.1/32 trust\n"
            }
            // Replication too, so that a standby can be cloned from it.
            None => {
                "local all all trust\nhost all all 127.0.0.1/32 trust\n\
                 host replication all 127.0.0.1/32 trust\n"
            }
        };
        append(&data.join("postgresql.conf"), &conf);
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        let log = self.dir.join("log");
        let started = self.try_run(
            "pg_ctl",
            &["-D", path(&data), "-w", "-l", path(&log), "start"],
        );
        if !started {
            panic!(
                "the test cluster did not start:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        if self.certs.is_some() {
            let port = self.port.to_string();
            self.run(
                "psql",
                &[
                    "-h",
                    path(&self.dir),
                    "-p",
                    &port,
                    "-U",
                    "postgres",
                    "-qc",
                    "CREATE ROLE remit_cert LOGIN SUPERUSER",
                ],
            );
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        assert!(self.try_run(program, args), "{program} {args:?} failed");
    }

    /// Runs one of PostgreSQL's programs, as the `postgres` user when
    /// this process is root (initdb and pg_ctl refuse root).
    fn try_run(&self, program: &str, args: &[&str]) -> bool {
        let program = self.bin.join(program);
        let mut command = if is_root() {
            chown_postgres(&self.dir);
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        command
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self.try_run(
            "pg_ctl",
            &["-D", path(&data), "-m", "immediate", "-w", "stop"],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn binaries() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("PG_BIN") {
        return Some(PathBuf::from(bin));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists() && bin.join("pg_ctl").exists())
        .collect();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop()
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.trim_ascii() == b"0")
        .unwrap_or(false)
}

fn chown_postgres(dir: &Path) {
    let _ = Command::new("chown")
        .args(["-R", "postgres"])
        .arg(dir)
        .status();
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn append(file: &Path, text: &str) {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// The test CA, a second CA, a server certificate for `localhost` and a
/// client certificate for `remit_cert`, made with the openssl CLI.
fn make_certs(dir: &Path) -> Certs {
    std::fs::create_dir_all(dir).unwrap();
    let openssl = |args: String| {
        let out = Command::new("openssl")
            .args(args.split_whitespace())
            .current_dir(dir)
            .output()
            .expect("the openssl CLI makes the test certificates");
        assert!(
            out.status.success(),
            "openssl {args}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // Subjects without spaces: the arguments are split on them.
    let key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    let ca_extensions = "-addext basicConstraints=critical,CA:TRUE \
                         -addext keyUsage=critical,keyCertSign,cRLSign";
    for (name, cn) in [("ca", "remit-test-CA"), ("other_ca", "remit-other-CA")] {
        openssl(format!(
            "req -x509 {key} -keyout {name}.key -out {name}.crt -days 2 -subj /CN={cn} {ca_extensions}"
        ));
    }
    for (name, cn, ext) in [
        (
            "server",
            "localhost",
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
        ),
        ("client", "remit_cert", "extendedKeyUsage=clientAuth\n"),
    ] {
        std::fs::write(
            dir.join(format!("{name}.ext")),
            format!("basicConstraints=CA:FALSE\n{ext}"),
        )
        .unwrap();
        openssl(format!(
            "req {key} -keyout {name}.key -out {name}.csr -subj /CN={cn}"
        ));
        openssl(format!(
            "x509 -req -in {name}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out {name}.crt -extfile {name}.ext"
        ));
    }
    set_mode(&dir.join("server.key"), 0o600);
    set_mode(&dir.join("client.key"), 0o600);
    Certs {
        ca: dir.join("ca.crt"),
        other_ca: dir.join("other_ca.crt"),
        client_cert: dir.join("client.crt"),
        client_key: dir.join("client.key"),
    }
}

fn set_mode(file: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
}
