//! `remit run` as a child process serving the console on a free port of
//! loopback, against the test's database; stopped with SIGTERM on drop.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::TestDb;

/// The bootstrap admin token the child is started with (`REMIT_API_TOKEN`).
pub const ADMIN_TOKEN: &str = "console-admin-token-0123456789";

/// The region the child serves.
pub const REGION: remit::domain::Region = remit::domain::Region::EU;

/// A running `remit run` and where its console is.
pub struct RemitRun {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub base: String,
}

/// `remit` pointed at the test's database, as an operator would run it.
pub fn remit(db: &TestDb) -> Command {
    remit_testkit::remit_command!(db)
}

impl RemitRun {
    /// Starts `remit run --region eu` with quick claim polling and waits
    /// until its console answers.
    pub async fn start(db: &TestDb) -> Self {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port on loopback")
            .to_string();
        let child = remit(db)
            .args(["run", "--region", REGION.as_str()])
            .env("REMIT_API__BIND", &addr)
            .env("REMIT_API_TOKEN", ADMIN_TOKEN)
            .env("REMIT_CLAIM__BUSY_POLL_MS", "10")
            .env("REMIT_CLAIM__IDLE_POLL_MS", "50")
            .env("REMIT_LOG__LEVEL", "error")
            .stdout(Stdio::null())
            .spawn()
            .expect("start remit run");
        let mut run = Self {
            child: Some(child),
            base: format!("http://{addr}"),
        };
        run.wait_until_serving(Duration::from_secs(15)).await;
        run
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Polls the sign-in page (the console's one page without a session)
    /// until it answers 200.
    async fn wait_until_serving(&mut self, within: Duration) {
        remit_actors::app::install_crypto_provider();
        let client = awc::Client::default();
        let deadline = Instant::now() + within;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("remit run exited before it served the console: {status}");
                }
            }
            let answer = client.get(self.url("/console/sign-in")).send().await;
            match answer {
                Ok(response) if response.status().is_success() => return,
                _ => {}
            }
            assert!(
                Instant::now() < deadline,
                "remit run served no /console/sign-in within {within:?}"
            );
            actix_rt::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Drop for RemitRun {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        // A graceful stop takes the shutdown grace at most; past that the
        // process is killed so a test never hangs on it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// `remit status --region eu --format json`: the region's entry.
pub fn status_json(db: &TestDb) -> serde_json::Value {
    let output = remit(db)
        .args(["status", "--region", REGION.as_str(), "--format", "json"])
        .output()
        .expect("run remit status");
    assert!(
        output.status.success(),
        "remit status failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("remit status prints JSON");
    report["regions"]
        .as_array()
        .and_then(|regions| {
            regions
                .iter()
                .find(|r| r["region"] == REGION.as_str())
                .cloned()
        })
        .unwrap_or_else(|| panic!("no region {} in {report}", REGION.as_str()))
}

/// `remit token create --scope SCOPE`: the new token.
pub fn create_token(db: &TestDb, scope: &str, name: &str) -> String {
    let output = remit(db)
        .args(["token", "create", "--scope", scope, "--name", name])
        .output()
        .expect("run remit token create");
    assert!(
        output.status.success(),
        "remit token create failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("the token is text")
        .trim()
        .to_owned()
}
