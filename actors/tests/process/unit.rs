//! The shipped systemd unit as systemd would start it: exactly its
//! `Environment=` lines and its `ExecStartPre`/`ExecStart` commands, with
//! only the paths moved into a temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;

use super::support::{self, Receiver, Reply, TestDb};
use super::{run, terminate};

/// The unit, read from `deploy/`.
struct Unit {
    environment: Vec<(String, String)>,
    start_pre: Vec<String>,
    start: Vec<String>,
}

impl Unit {
    /// The unit for `instance`, with `/etc/remit/` moved to `etc` and the
    /// installed binary replaced by the one under test.
    fn read(instance: &str, etc: &Path) -> Self {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/remit@.service");
        let text = std::fs::read_to_string(path).unwrap();
        let localize = |value: &str| {
            value
                .replace("%i", instance)
                .replace("/etc/remit/", &format!("{}/", etc.display()))
                .replace("/usr/local/bin/remit", env!("CARGO_BIN_EXE_remit"))
        };
        let mut unit = Unit {
            environment: Vec::new(),
            start_pre: Vec::new(),
            start: Vec::new(),
        };
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let words = || {
                localize(value)
                    .split_whitespace()
                    .map(String::from)
                    .collect()
            };
            match key.trim() {
                "Environment" => {
                    let (name, value) = value.split_once('=').expect("NAME=value");
                    unit.environment.push((name.into(), localize(value)));
                }
                "ExecStartPre" => unit.start_pre = words(),
                "ExecStart" => unit.start = words(),
                _ => {}
            }
        }
        assert!(!unit.start.is_empty(), "the unit has an ExecStart");
        unit
    }

    /// `argv` with the unit's environment and the secrets file's
    /// variables, and nothing else.
    fn command(&self, argv: &[String], secrets: &[(&str, String)]) -> Command {
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.environment.iter().map(|(k, v)| (k, v)))
            .envs(secrets.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null());
        command
    }
}

/// The directory the unit's `/etc/remit/` stands for, with an instance's
/// configuration file in it.
fn etc_with_config(instance: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("remit-unit-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let hosts: Vec<String> = support::ALLOW_HOSTS
        .iter()
        .map(|h| format!("{h:?}"))
        .collect();
    std::fs::write(
        dir.join(format!("{instance}.toml")),
        format!(
            "[api]\nbind = \"127.0.0.1:0\"\n\n[send]\nallow_hosts = [{}]\n\n[log]\nformat = \"json\"\nlevel = \"warning\"\n",
            hosts.join(", ")
        ),
    )
    .unwrap();
    dir
}

#[actix_rt::test]
async fn the_systemd_unit_migrates_starts_and_delivers() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![], Reply::ok());
    let etc = etc_with_config("us");
    let unit = Unit::read("us", &etc);
    let secrets = [
        ("DATABASE_URL", db.url.clone()),
        (
            "REMIT_PAYLOAD_KEY",
            base64::engine::general_purpose::STANDARD.encode([7u8; 32]),
        ),
        ("REMIT_API_TOKEN", "unit-token".to_owned()),
    ];

    if Path::new("/usr/bin/systemd-analyze").exists() {
        let units = etc.join("units");
        std::fs::create_dir_all(&units).unwrap();
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/remit@.service"),
        )
        .unwrap()
        .replace("/usr/local/bin/remit", env!("CARGO_BIN_EXE_remit"));
        std::fs::write(units.join("remit@.service"), text).unwrap();
        let verify = Command::new("systemd-analyze")
            .arg("verify")
            .arg(units.join("remit@us.service"))
            .output()
            .unwrap();
        assert!(
            verify.status.success(),
            "systemd-analyze verify: {}",
            String::from_utf8_lossy(&verify.stderr)
        );
    }

    // ExecStartPre, as systemd runs it before every start.
    run(&mut unit.command(&unit.start_pre, &secrets));
    run(&mut unit.command(&unit.start_pre, &secrets));

    // An operator's first reminder, scheduled under the same environment.
    let cli = |args: &[&str]| {
        let mut argv = vec![env!("CARGO_BIN_EXE_remit").to_owned()];
        argv.extend(args.iter().map(|a| a.to_string()));
        unit.command(&argv, &secrets)
    };
    run(&mut cli(&[
        "destination",
        "add",
        "--id",
        "crm",
        "--region",
        "us",
        "--url",
        &receiver.url("/hook"),
    ]));
    run(&mut cli(&[
        "schedule",
        "--tenant",
        "clinic-1",
        "--reminder",
        "renewal-1",
        "--destination",
        "crm",
        "--region",
        "us",
        "--not-before",
        &chrono::Utc::now().to_rfc3339(),
        "--payload",
        "{}",
    ]));

    let child = unit.command(&unit.start, &secrets).spawn().unwrap();
    receiver
        .wait_until(
            Duration::from_secs(15),
            "the unit's process delivers",
            |r| !r.is_empty(),
        )
        .await;
    let status = terminate(child).await;
    assert_eq!(status.code(), Some(0), "SIGTERM, as systemd stops it");
    std::fs::remove_dir_all(&etc).unwrap();
}
