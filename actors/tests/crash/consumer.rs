//! `remit run` as a child process with short leases, optionally armed with
//! a failpoint.

use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use crate::support::TestDb;

pub struct Consumer {
    child: Option<Child>,
    api: std::net::SocketAddr,
}

impl Consumer {
    /// Starts `remit run` for `region` as consumer `name`. `failpoints` is
    /// the FAILPOINTS value, e.g. `remit::after_response=return(exit)`.
    pub fn start(db: &TestDb, region: &str, name: &str, failpoints: Option<&str>) -> Self {
        // A free port, so the test can ask /readyz when the process is up.
        let api = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap();
        let mut command = remit_testkit::remit_command!(db);
        command
            .env("REMIT_REGION", region)
            .env("REMIT_CONSUMER_ID", name)
            .env("REMIT_LEASE__SECONDS", "2")
            .env("REMIT_SEND__TIMEOUT_MS", "1000")
            .env("REMIT_CLAIM__BUSY_POLL_MS", "10")
            .env("REMIT_CLAIM__IDLE_POLL_MS", "100")
            .env("REMIT_RETRY__BACKOFF_BASE_MS", "100")
            .env("REMIT_RETRY__BACKOFF_CAP_SECONDS", "1")
            .env("REMIT_RETRY__MAX_ATTEMPTS", "100")
            .env("REMIT_THROTTLE__DEFAULT__RATE_PER_SECOND", "200")
            .env("REMIT_THROTTLE__DEFAULT__BURST", "50")
            .env("REMIT_DATABASE__POOL_SIZE", "4")
            .env("REMIT_API__BIND", api.to_string())
            .env("REMIT_LOG__LEVEL", "error")
            .stdout(Stdio::null())
            .args(["run"]);
        if let Some(points) = failpoints {
            command.env("FAILPOINTS", points);
        }
        Self {
            child: Some(command.spawn().expect("start remit run")),
            api,
        }
    }

    /// Waits until /readyz answers 200: the supervisor runs and the signal
    /// handlers are in place.
    pub async fn ready(&self) {
        let client = awc::Client::default();
        let url = format!("http://{}/readyz", self.api);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(response) = client.get(&url).send().await {
                if response.status().is_success() {
                    return;
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "remit run never became ready"
            );
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the process to end by itself (a crash failpoint).
    pub async fn exited(&mut self, within: Duration) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        tokio::task::spawn_blocking(move || {
            let deadline = std::time::Instant::now() + within;
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    return status;
                }
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("remit run did not exit within {within:?}");
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
        .await
        .unwrap()
    }

    /// SIGKILL: no shutdown, no releases, as a host failure would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM once the process is ready, and wait for the graceful exit.
    pub async fn stop(&mut self) -> ExitStatus {
        self.ready().await;
        let child = self.child.take().expect("running");
        let pid = child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        tokio::task::spawn_blocking(move || {
            let mut child = child;
            child.wait().unwrap()
        })
        .await
        .unwrap()
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        self.kill();
    }
}
