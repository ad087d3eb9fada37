//! A throwaway PostgreSQL cluster a test starts, crashes and starts again
//! (`pg_ctl stop -m immediate`: no checkpoint, every session cut, as a
//! crash would). initdb and pg_ctl refuse root, so as root they run as the
//! `postgres` user; the cluster listens on a free port of 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    port: u16,
}

impl Cluster {
    pub fn start() -> Self {
        let bin = newest_bin_dir();
        let as_postgres = running_as_root();
        let dir = std::env::temp_dir().join(format!("remit-test-pg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Cluster {
            dir,
            bin,
            as_postgres,
            port,
        };
        if as_postgres {
            run(Command::new("chown").arg("postgres").arg(&cluster.dir));
        }
        run(cluster
            .tool("initdb")
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(cluster.data()));
        cluster.resume();
        cluster
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Cuts every session at once, as a crash of the server would.
    pub fn crash(&self) {
        run(self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"]));
    }

    /// Starts the server and returns once it accepts connections.
    pub fn resume(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.display()
        );
        run(self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.join("log"))
            .args(["-w", "-o", &options, "start"]));
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `/usr/lib/postgresql/<newest>/bin`, as Debian installs it.
fn newest_bin_dir() -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    std::fs::read_dir(root)
        .expect("PostgreSQL server binaries under /usr/lib/postgresql")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            Some((name.parse::<f64>().ok()?, name))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| root.join(name).join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .expect("initdb under /usr/lib/postgresql/*/bin")
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Uid:"))?;
            Some(line.split_whitespace().nth(1)? == "0")
        })
        .unwrap_or(false)
}

fn run(command: &mut Command) {
    let shown = format!("{command:?}");
    let output = command.stdin(Stdio::null()).output().unwrap();
    assert!(
        output.status.success(),
        "{shown} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
}
