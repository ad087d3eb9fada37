//! Chromium, driven over WebDriver: one `chromedriver` per test binary,
//! started on first use and killed when the last test holding it is done,
//! and one headless Chromium session per test with a profile of its own.

use std::future::Future;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use futures_util::FutureExt as _;
use tokio::sync::Semaphore;

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// How long an element may take to appear after a click or a navigation.
/// Long enough for a page's live refresh (every 5 s) to show a change
/// made just after it last ran.
pub const ELEMENT_WAIT: Duration = Duration::from_secs(15);

/// Flags for a quick headless Chromium on a machine without internet:
/// without the background-network ones it waits on lookups that never
/// answer.
const CHROMIUM_FLAGS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
];

/// Browsers open at once: each Chromium takes most of a core while it
/// starts, and the tests of one binary run in parallel.
static BROWSERS: Semaphore = Semaphore::const_new(2);

/// The running chromedriver, if a test holds it.
static DRIVER: Mutex<Weak<ChromeDriver>> = Mutex::new(Weak::new());

/// A `chromedriver` child process listening on loopback; killed on drop.
#[derive(Debug)]
pub struct ChromeDriver {
    child: Mutex<Child>,
    port: u16,
}

impl ChromeDriver {
    /// The running driver, or a new one when no test holds it. Every test
    /// that holds the `Arc` keeps it alive; the last one to finish kills it.
    pub fn shared() -> Arc<ChromeDriver> {
        let mut slot = DRIVER.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(driver) = slot.upgrade() {
            return driver;
        }
        let driver = Arc::new(Self::start());
        *slot = Arc::downgrade(&driver);
        driver
    }

    fn start() -> Self {
        assert!(
            Path::new(CHROMEDRIVER).exists() && Path::new(CHROMIUM).exists(),
            "the console's browser tests need Debian's chromium and chromium-driver \
             ({CHROMIUM}, {CHROMEDRIVER}); .ci/run installs them"
        );
        // The free port is only free when it was looked at: another test
        // binary may take it first, and then this driver exits at once.
        let mut failures = Vec::new();
        for _ in 0..3 {
            let port = free_port();
            let child = Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start chromedriver");
            let driver = Self {
                child: Mutex::new(child),
                port,
            };
            match driver.wait_until_ready(Duration::from_secs(10)) {
                Ok(()) => return driver,
                Err(why) => failures.push(why),
            }
        }
        panic!("chromedriver did not start: {failures:?}")
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Polls `/status` until the driver says it is ready; says why not.
    fn wait_until_ready(&self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.exited() {
                return Err(format!("exited on port {}: {status}", self.port));
            }
            if status_is_ready(self.port) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!("not ready on port {} within {within:?}", self.port));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn exited(&self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        child.try_wait().ok().flatten()
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port on loopback")
        .port()
}

/// One plain `GET /status`: whether its JSON says `"ready": true`.
fn status_is_ready(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    serde_json::from_str::<serde_json::Value>(body)
        .map(|status| status["value"]["ready"] == true)
        .unwrap_or(false)
}

/// Opens a headless Chromium with a fresh profile, runs `scenario` with it,
/// and closes it again whether the scenario passed or panicked (the panic
/// is then passed on). Answers what the scenario answered.
pub async fn with_browser<F, Fut, T>(scenario: F) -> T
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = T>,
{
    let driver = ChromeDriver::shared();
    let _turn = BROWSERS
        .acquire()
        .await
        .expect("the semaphore is never closed");
    let profile = std::env::temp_dir().join(format!("remit-chromium-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&profile).expect("create the browser profile directory");
    let client = connect(&driver, &profile).await;
    let outcome = AssertUnwindSafe(scenario(client.clone()))
        .catch_unwind()
        .await;
    let closed = client.close().await;
    let _ = std::fs::remove_dir_all(&profile);
    drop(driver);
    let answer = outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    closed.expect("close the browser session");
    answer
}

async fn connect(driver: &ChromeDriver, profile: &Path) -> Client {
    let mut args: Vec<String> = CHROMIUM_FLAGS
        .iter()
        .map(|flag| (*flag).to_owned())
        .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({ "binary": CHROMIUM, "args": args }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(&driver.url())
        .await
        .unwrap_or_else(|e| panic!("open a Chromium session through {}: {e}", driver.url()))
}

/// Waits for the element `css` selects, or fails naming it and the page.
pub async fn wait_for(client: &Client, css: &str) -> fantoccini::elements::Element {
    wait_for_locator(client, Locator::Css(css), css).await
}

/// As [`wait_for`], for what only XPath can say (an element's text).
pub async fn wait_for_xpath(client: &Client, xpath: &str) -> fantoccini::elements::Element {
    wait_for_locator(client, Locator::XPath(xpath), xpath).await
}

async fn wait_for_locator(
    client: &Client,
    locator: Locator<'_>,
    what: &str,
) -> fantoccini::elements::Element {
    match client
        .wait()
        .at_most(ELEMENT_WAIT)
        .for_element(locator)
        .await
    {
        Ok(element) => element,
        Err(e) => {
            let url = client.current_url().await.map(|u| u.to_string());
            // What a person would have seen, to tell a wrong page from a
            // slow one.
            let shown = client
                .execute(
                    "return document.body ? document.body.innerText : ''",
                    vec![],
                )
                .await
                .map(|text| {
                    text.as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(600)
                        .collect::<String>()
                });
            panic!("no `{what}` within {ELEMENT_WAIT:?} on {url:?} ({e}); the page said: {shown:?}")
        }
    }
}

/// Where the screenshots go: `console-screenshots` in the target directory
/// (`CARGO_TARGET_DIR` if set, else the workspace's `target/`).
pub fn screenshot_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the actors crate sits in the workspace")
        .to_path_buf();
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    };
    target.join("console-screenshots")
}

/// Writes what the browser shows now to `<screenshot_dir>/<name>.png`.
/// Both stores' runs of a scenario write the same names at about the same
/// time, so each file is written aside and renamed into place whole.
pub async fn screenshot(client: &Client, name: &str) -> PathBuf {
    let png = client.screenshot().await.expect("take a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is a PNG");
    let dir = screenshot_dir();
    std::fs::create_dir_all(&dir).expect("create the screenshot directory");
    let path = dir.join(format!("{name}.png"));
    let aside = dir.join(format!(".{name}-{}.png", uuid::Uuid::new_v4().simple()));
    std::fs::write(&aside, png).expect("write the screenshot");
    std::fs::rename(&aside, &path).expect("move the screenshot into place");
    path
}
