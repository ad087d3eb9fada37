//! Signatures checked by the public Standard Webhooks library (the
//! `standardwebhooks` package from PyPI), not by remit's code: a virtual
//! environment under the target directory (`target/tmp`, beside the test
//! binary's own build), made on first use.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use base64::Engine as _;

use super::receiver::Received;

/// The package version the tests verify with.
const PACKAGE: &str = "standardwebhooks==1.1.0";

/// `target/tmp` of the build the running test binary belongs to
/// (`target/debug/deps/<binary>`), as Cargo's `CARGO_TARGET_TMPDIR` is for
/// an integration test: one environment per checkout, gone with `cargo
/// clean`.
fn target_tmp() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("a test binary under target/<profile>/deps");
    let tmp = target.join("tmp");
    std::fs::create_dir_all(&tmp).expect("target/tmp");
    tmp
}

/// The Python that has the package: `REMIT_STANDARDWEBHOOKS_PYTHON` when
/// set, else a virtual environment of the tests' own.
fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            if let Ok(python) = std::env::var("REMIT_STANDARDWEBHOOKS_PYTHON") {
                return PathBuf::from(python);
            }
            let venv = target_tmp().join("standardwebhooks-venv");
            let python = venv.join("bin/python");
            if !python.exists() {
                // Made aside and moved into place, so a test binary running
                // at the same time never sees half an environment.
                let aside = venv.with_extension(format!("{}", std::process::id()));
                run(Command::new("python3").arg("-m").arg("venv").arg(&aside));
                run(Command::new(aside.join("bin/python"))
                    .args(["-m", "pip", "install", "--quiet", PACKAGE]));
                if std::fs::rename(&aside, &venv).is_err() {
                    // Another binary moved its own in first.
                    let _ = std::fs::remove_dir_all(&aside);
                }
            }
            python
        })
        .clone()
}

fn run(command: &mut Command) {
    let status = command.status().expect("start the Python setup");
    assert!(
        status.success(),
        "{command:?} failed: the tests need python3 and {PACKAGE} from PyPI"
    );
}

/// Whether the library accepts `request` as signed with `secret`; for each
/// pair, in order: `Ok(())` or the library's reason for refusing.
pub fn verify(cases: &[(&str, &Received)]) -> Vec<Result<(), String>> {
    let input: Vec<serde_json::Value> = cases
        .iter()
        .map(|(secret, request)| {
            let header = |name: &str| request.header(name).unwrap_or_default().to_owned();
            serde_json::json!({
                "secret": secret,
                "body_base64": base64::engine::general_purpose::STANDARD.encode(&request.body),
                "headers": {
                    "webhook-id": header("webhook-id"),
                    "webhook-timestamp": header("webhook-timestamp"),
                    "webhook-signature": header("webhook-signature"),
                },
            })
        })
        .collect();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/runtime/verify_webhooks.py"
    );
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the verifier");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&input).unwrap().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the verifier failed");
    let lines: Vec<Result<(), String>> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| match line {
            "ok" => Ok(()),
            refused => Err(refused.to_owned()),
        })
        .collect();
    assert_eq!(lines.len(), cases.len(), "an answer per case");
    lines
}
