//! The runtime under test: the release `remit` binary as child processes
//! (`remit migrate`, `remit run --region R`), each with its API on a port
//! of its own and its log in the run's folder, so several can serve one
//! region and each one's peak memory can be read from /proc.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::error::LoadError;
use crate::settings::RemitSettings;

/// The bearer token every process of a run accepts.
pub const API_TOKEN: &str = "load-harness";

/// The `remit` binary a run drives, and whether it predates the sources.
#[derive(Debug, Clone)]
pub struct Binary {
    pub path: PathBuf,
    /// Why the binary may not be what the sources say, when it may not.
    pub stale: Option<String>,
}

impl Binary {
    /// `LOAD_REMIT_BIN`, else `remit` in the same profile folder as this
    /// bench (`target/release/`, where `cargo bench` puts its binaries
    /// under `deps/`).
    pub fn locate() -> Result<Self, LoadError> {
        let path = match std::env::var_os("LOAD_REMIT_BIN") {
            Some(path) => PathBuf::from(path),
            None => std::env::current_exe()
                .map_err(LoadError::io("finding the bench's own path"))?
                .parent()
                .and_then(Path::parent)
                .map(|profile| profile.join("remit"))
                .ok_or_else(|| LoadError::Setup("the bench binary has no profile folder".into()))?,
        };
        let built = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|_| {
                LoadError::Setup(format!(
                    "no remit binary at {}: build it first with \
                     `cargo build --release -p remit-actors --bin remit` (or set LOAD_REMIT_BIN)",
                    path.display()
                ))
            })?;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let stale = newest_source(root).and_then(|(changed, source)| {
            (changed > built).then(|| {
                format!(
                    "{} is older than {} (rebuild with `cargo build --release -p remit-actors --bin remit`)",
                    path.display(),
                    source.strip_prefix(root).unwrap_or(&source).display()
                )
            })
        });
        Ok(Self { path, stale })
    }

    /// Runs a one-shot command (`remit migrate`) to completion.
    pub fn run_once(&self, env: &[(String, String)], args: &[&str]) -> Result<(), LoadError> {
        let output = Command::new(&self.path)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .output()
            .map_err(LoadError::io(format!("running remit {}", args.join(" "))))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(LoadError::Process(format!(
                "remit {} failed ({}): {}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )))
        }
    }
}

/// The newest file among the binary's own sources. Manifests and the lock
/// file are left out: adding a dev-dependency (as this harness did) touches
/// them without changing the binary, and a warning on every run would be
/// noise. A dependency bump is therefore not noticed.
fn newest_source(root: &Path) -> Option<(SystemTime, PathBuf)> {
    let mut newest: Option<(SystemTime, PathBuf)> = None;
    let mut pending: Vec<PathBuf> = ["src", "actors/src", "migrations"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    let mut consider = |path: PathBuf| {
        if let Ok(changed) = std::fs::metadata(&path).and_then(|m| m.modified()) {
            if newest.as_ref().is_none_or(|(t, _)| changed > *t) {
                newest = Some((changed, path));
            }
        }
    };
    consider(root.join("build.rs"));
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                consider(path);
            }
        }
    }
    newest
}

/// The environment every process of a run shares: the database, the key,
/// the token, the allowlist for the local receiver and the settings under
/// test. Other `REMIT_*` variables of the caller's environment pass through,
/// so any setting can be tried without a new knob.
pub fn environment(
    settings: &RemitSettings,
    database_url: &str,
    payload_key: &str,
) -> Vec<(String, String)> {
    let s = settings;
    [
        ("DATABASE_URL", database_url.to_owned()),
        ("REMIT_PAYLOAD_KEY", payload_key.to_owned()),
        ("REMIT_API_TOKEN", API_TOKEN.to_owned()),
        // The receiver listens on loopback over plain http.
        ("REMIT_SEND__ALLOW_HOSTS", r#"["127.0.0.0/8"]"#.to_owned()),
        ("REMIT_SEND__ALLOW_PLAIN_HTTP", "true".to_owned()),
        ("REMIT_SEND__MAX_IN_FLIGHT", s.max_in_flight.to_string()),
        (
            "REMIT_THROTTLE__DEFAULT__RATE_PER_SECOND",
            s.rate_per_destination.to_string(),
        ),
        ("REMIT_THROTTLE__DEFAULT__BURST", s.burst.to_string()),
        (
            "REMIT_THROTTLE__DEFAULT__MAX_IN_FLIGHT",
            s.destination_in_flight.to_string(),
        ),
        ("REMIT_CLAIM__BATCH_SIZE", s.claim_batch.to_string()),
        ("REMIT_CLAIM__PER_DESTINATION_CAP", s.claim_cap.to_string()),
        ("REMIT_DATABASE__POOL_SIZE", s.pool_size.to_string()),
        ("REMIT_API__POOL_SIZE", s.api_pool_size.to_string()),
        ("REMIT_LOG__LEVEL", s.log_level.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// What a process used, read from /proc just before it stopped.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Usage {
    pub label: String,
    /// Peak resident memory (VmHWM), MiB.
    pub rss_mb: f64,
    /// Resident memory right now (VmRSS), MiB.
    pub rss_now_mb: f64,
    /// User and system CPU time, seconds.
    pub cpu_s: f64,
}

/// One `remit run` child.
#[derive(Debug)]
pub struct RemitProcess {
    child: Child,
    label: String,
    api: SocketAddr,
    log: PathBuf,
    exited: bool,
}

impl RemitProcess {
    /// Starts `remit run --region <region>` with its API on a free port
    /// and its stderr in `<log_dir>/<label>.log`.
    pub fn spawn(
        binary: &Binary,
        env: &[(String, String)],
        extra: &[(&str, &str)],
        region: &str,
        label: &str,
        log_dir: &Path,
    ) -> Result<Self, LoadError> {
        let api = SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let log = log_dir.join(format!("{label}.log"));
        let stderr =
            std::fs::File::create(&log).map_err(LoadError::io(format!("creating {log:?}")))?;
        let child = Command::new(&binary.path)
            .args(["run", "--region", region])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .envs(extra.iter().copied())
            .env("REMIT_API__BIND", api.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(LoadError::io(format!("starting {}", binary.path.display())))?;
        Ok(Self {
            child,
            label: label.to_owned(),
            api,
            log,
            exited: false,
        })
    }

    pub fn api(&self) -> SocketAddr {
        self.api
    }

    /// Waits until `/healthz` answers, or fails with the process's log.
    pub async fn wait_ready(
        &mut self,
        client: &awc::Client,
        within: Duration,
    ) -> Result<(), LoadError> {
        let deadline = Instant::now() + within;
        let url = format!("http://{}/healthz", self.api);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exited = true;
                return Err(LoadError::Process(format!(
                    "{} exited with {status} before it was ready; {}",
                    self.label,
                    self.log_tail()
                )));
            }
            if let Ok(response) = client.get(&url).send().await {
                if response.status().is_success() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(LoadError::Process(format!(
                    "{} did not answer /healthz within {within:?}; {}",
                    self.label,
                    self.log_tail()
                )));
            }
            actix_rt::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Why the process is gone, when it exited on its own.
    pub fn exited(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok()??;
        self.exited = true;
        Some(format!(
            "{} exited with {status}; {}",
            self.label,
            self.log_tail()
        ))
    }

    /// Peak memory and CPU so far.
    pub fn usage(&self) -> Usage {
        let pid = self.child.id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let kb = |field: &str| {
            status
                .lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        // utime and stime, fields 14 and 15, counted after the command
        // name's closing parenthesis (the name may hold spaces).
        let ticks = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let rest = stat.rsplit_once(')')?.1;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                Some(fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?)
            })
            .unwrap_or(0.0);
        Usage {
            label: self.label.clone(),
            rss_mb: kb("VmHWM:") / 1024.0,
            rss_now_mb: kb("VmRSS:") / 1024.0,
            cpu_s: ticks / clock_ticks_per_second(),
        }
    }

    /// SIGTERM, then waits for the graceful drain (remit finishes what is
    /// in flight); kills it if it takes longer than `grace`. Returns what
    /// it used.
    pub async fn stop(&mut self, grace: Duration) -> Usage {
        let usage = self.usage();
        if self.exited {
            // Already reported; /proc no longer has it.
            return usage;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    self.exited = true;
                    if !status.success() {
                        eprintln!("{} exited with {status}; {}", self.label, self.log_tail());
                    }
                    return usage;
                }
                _ if Instant::now() > deadline => {
                    eprintln!("{} did not stop within {grace:?}; killing it", self.label);
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    self.exited = true;
                    return usage;
                }
                _ => actix_rt::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n");
        format!("log {}:\n{tail}", self.log.display())
    }
}

impl Drop for RemitProcess {
    /// A run that fails midway still leaves no process behind.
    fn drop(&mut self) {
        if !self.exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A port nothing listens on right now (the kernel's pick for :0).
pub fn free_port() -> Result<u16, LoadError> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(LoadError::io("finding a free port"))?;
    Ok(listener
        .local_addr()
        .map_err(LoadError::io("finding a free port"))?
        .port())
}

/// The kernel's clock tick for /proc times (`getconf CLK_TCK`; 100 on
/// every Linux this runs on, which is also the fallback).
fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0)
}
