//! A throwaway PostgreSQL cluster for runs without DATABASE_URL, started
//! the way `.ci/run` starts one: initdb and pg_ctl from the newest
//! installed version, as the `postgres` user when running as root (both
//! refuse root), listening on a free port of 127.0.0.1. Unlike CI's it
//! keeps `fsync` on, so its numbers compare with a real server's, and it
//! loads pg_stat_statements.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::LoadError;
use crate::process::free_port;

#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    url: String,
}

impl Cluster {
    pub fn start() -> Result<Self, LoadError> {
        let bin = newest_bin_dir()?;
        let as_postgres = running_as_root();
        let dir = std::env::temp_dir().join(format!("remit-load-pg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).map_err(LoadError::io(format!("creating {dir:?}")))?;
        let port = free_port()?;
        let cluster = Cluster {
            dir,
            bin,
            as_postgres,
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        };
        if as_postgres {
            run(Command::new("chown").arg("postgres").arg(&cluster.dir))?;
        }
        let data = cluster.dir.join("data");
        run(cluster
            .tool("initdb")
            .args(["-A", "trust", "-U", "postgres", "-D"])
            .arg(&data))?;
        let mut options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1",
            cluster.dir.display()
        );
        // Round trips counted per statement (see `statements`), where the
        // contrib library is installed.
        if cluster.bin.join("../lib/pg_stat_statements.so").exists() {
            options.push_str(" -c shared_preload_libraries=pg_stat_statements");
        }
        // An experiment's settings (`-c auto_explain.…`, say), after ours.
        if let Ok(extra) = std::env::var("LOAD_PG_OPTIONS") {
            options.push(' ');
            options.push_str(&extra);
        }
        run(cluster
            .tool("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(cluster.dir.join("log"))
            .args(["-w", "-o", &options, "start"]))?;
        eprintln!("started a throwaway PostgreSQL cluster on 127.0.0.1:{port}");
        Ok(cluster)
    }

    pub fn url(&self) -> &str {
        &self.url
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
        let data = self.dir.join("data");
        let _ = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["-m", "fast", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // The server's log outlives the cluster where asked (LOAD_PG_LOG).
        if let Ok(keep) = std::env::var("LOAD_PG_LOG") {
            let _ = std::fs::copy(self.dir.join("log"), keep);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `/usr/lib/postgresql/<newest>/bin`, as Debian installs it.
fn newest_bin_dir() -> Result<PathBuf, LoadError> {
    let root = Path::new("/usr/lib/postgresql");
    let newest = std::fs::read_dir(root)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            Some((name.parse::<f64>().ok()?, name))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| root.join(name).join("bin"));
    newest
        .filter(|bin| bin.join("initdb").exists())
        .ok_or_else(|| {
            LoadError::Setup(
                "DATABASE_URL is not set and no PostgreSQL server binaries were found under \
             /usr/lib/postgresql/*/bin to start a throwaway cluster; set DATABASE_URL"
                    .into(),
            )
        })
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

fn run(command: &mut Command) -> Result<(), LoadError> {
    let shown = format!("{command:?}");
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(LoadError::io(format!("running {shown}")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(LoadError::Setup(format!(
            "{shown} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}
