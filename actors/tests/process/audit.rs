//! The command line's admin commands, each run as its own `remit` process:
//! each leaves one audit entry naming `cli` and the user who ran it (an
//! import one per transaction it commits), schedules and reads leave none,
//! and `remit audit` shows them, as JSON and as a table, with filters.

use serde_json::Value;

use crate::support::TestDb;

const USER: &str = "alice";
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// `remit` acting as `alice` (`--as`).
fn remit(db: &TestDb, args: &[&str]) -> std::process::Output {
    super::run(super::remit(db).args(["--as", USER]).args(args))
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every entry, oldest first, as `remit audit --format json` shows it.
fn entries(db: &TestDb) -> Vec<Value> {
    let out = remit(db, &["audit", "--format", "json", "--limit", "500"]);
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut all = page["entries"].as_array().unwrap().clone();
    all.reverse();
    all
}

/// Runs `args` and checks the entries it left: `actions`, in order, each
/// by `cli` `alice`; answers the command's output.
fn leaves(db: &TestDb, args: &[&str], actions: &[&str]) -> std::process::Output {
    let before = entries(db).len();
    let out = remit(db, args);
    let all = entries(db);
    let fresh = &all[before..];
    let got: Vec<&str> = fresh
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(got, actions, "{args:?}: {fresh:#?}");
    for e in fresh {
        assert_eq!(e["actor"]["kind"], "cli", "{args:?}");
        assert_eq!(e["actor"]["id"], USER, "{args:?}");
    }
    out
}

#[actix_rt::test]
async fn every_admin_command_leaves_its_entry() {
    let db = TestDb::with_database_clock().await;
    super::run(super::remit(&db).arg("migrate"));
    let made = leaves(
        &db,
        &["token", "create", "--scope", "read", "--name", "dash"],
        &["token.create"],
    );
    let token = stdout(&made).trim().to_owned();
    let told = String::from_utf8_lossy(&made.stderr).into_owned();
    let token_id = told
        .split_whitespace()
        .find(|w| w.starts_with("tok_"))
        .unwrap()
        .trim_end_matches([',', ':'])
        .to_owned();
    leaves(&db, &["token", "revoke", &token_id], &["token.revoke"]);
    leaves(&db, &["token", "list"], &[]);
    let add = [
        "destination",
        "add",
        "--id",
        "crm",
        "--region",
        "eu",
        "--url",
        "http://127.0.0.1:9/hook",
        "--secret",
        SECRET,
    ];
    leaves(&db, &add, &["destination.create"]);
    leaves(
        &db,
        &["destination", "disable", "crm", "--reason", "maintenance"],
        &["destination.disable"],
    );
    leaves(
        &db,
        &["destination", "enable", "crm"],
        &["destination.enable"],
    );
    let rotated = leaves(
        &db,
        &["destination", "rotate-secret", "crm"],
        &["destination.rotate_secret"],
    );
    let generated = stdout(&rotated).trim().to_owned();
    leaves(&db, &["destination", "secrets", "crm"], &[]);
    leaves(
        &db,
        &["retry-now", "--destination", "crm"],
        &["destination.retry_now"],
    );

    let mut ids = Vec::new();
    for reminder in ["a", "b", "c"] {
        let before = entries(&db).len();
        let out = super::run(
            super::schedule_in_2030(&db, "eu", reminder)
                .args(["--as", USER])
                .args(["--payload", r#"{"renewal":"2030-02-01"}"#]),
        );
        assert_eq!(
            entries(&db).len(),
            before,
            "a schedule is not an admin action"
        );
        let text = stdout(&out);
        let id = text
            .split_whitespace()
            .find(|w| uuid::Uuid::parse_str(w).is_ok())
            .unwrap_or_else(|| panic!("no task id in {text}"))
            .to_owned();
        ids.push(id);
    }
    leaves(&db, &["cancel", "--task", &ids[0]], &["task.cancel"]);
    leaves(
        &db,
        &[
            "reschedule",
            "--task",
            &ids[1],
            "--not-before",
            "2031-01-01T09:00:00Z",
        ],
        &["task.reschedule"],
    );
    leaves(&db, &["erase", "--task", &ids[2]], &["task.erase"]);
    leaves(&db, &["erase", "--tenant", "clinic-1"], &["tenant.erase"]);
    leaves(
        &db,
        &["replay", "--region", "eu", "--filter", "destination=crm"],
        &["replay_job.create"],
    );
    leaves(
        &db,
        &["cancel", "--region", "eu", "--filter", "destination=crm"],
        &["cancel_job.create"],
    );
    leaves(&db, &["status"], &[]);
    leaves(&db, &["rekey"], &["rekey"]);

    let file = std::env::temp_dir().join(format!("remit-audit-{}.jsonl", uuid::Uuid::new_v4()));
    let file_arg = file.to_str().unwrap();
    leaves(&db, &["export", "--file", file_arg], &[]);
    let other = TestDb::with_database_clock().await;
    super::run(super::remit(&other).arg("migrate"));
    leaves(
        &other,
        &["import", "--file", file_arg],
        &["import", "import"],
    );
    std::fs::remove_file(&file).unwrap();

    let all = entries(&db);
    let text = serde_json::to_string(&all).unwrap();
    for secret in [SECRET, &generated, &token, "2030-02-01"] {
        assert!(
            !text.contains(secret),
            "a secret in the audit log: {secret}"
        );
    }

    // The table, and the same filters as the API.
    let table = stdout(&remit(&db, &["audit", "--action", "destination.disable"]));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 1, "{table}");
    for part in ["cli alice", "destination.disable", "destination crm", "eu"] {
        assert!(lines[0].contains(part), "{part}: {table}");
    }
    crate::assert_cli_instant(lines[0].split_whitespace().nth(1).unwrap());
    let paged = stdout(&remit(&db, &["audit", "--limit", "2"]));
    assert!(
        paged
            .lines()
            .last()
            .unwrap()
            .starts_with("more: remit audit --before "),
        "{paged}"
    );
    let refused = super::remit(&db)
        .args(["audit", "--target-kind", "planet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--target-kind"), "{stderr}");
}

#[actix_rt::test]
async fn without_actor_a_command_acts_as_its_uid_s_user_whatever_user_says() {
    let db = TestDb::with_database_clock().await;
    super::run(super::remit(&db).arg("migrate"));
    super::run(super::remit(&db).args([
        "destination",
        "add",
        "--id",
        "crm",
        "--region",
        "eu",
        "--url",
        "https://crm.example.com/hook",
    ]));
    for environment in [Some("mallory"), None] {
        let mut command = super::remit(&db);
        command.env_remove("LOGNAME");
        match environment {
            Some(user) => command.env("USER", user),
            None => command.env_remove("USER"),
        };
        super::run(command.args(["destination", "disable", "crm"]));
        let all = entries(&db);
        let last = all.last().unwrap_or_else(|| panic!("no entries: {all:?}"));
        assert_eq!(last["actor"]["kind"], "cli");
        assert_eq!(
            last["actor"]["id"],
            whoami::username().unwrap(),
            "{environment:?}"
        );
        super::run(super::remit(&db).args(["destination", "enable", "crm"]));
    }
    // A name the log cannot take is refused, naming the flag.
    let refused = super::remit(&db)
        .args(["--as", "", "destination", "disable", "crm"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--as: "), "{said}");
}
