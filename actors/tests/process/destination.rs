//! `remit destination add | disable | enable`: what each prints, and how a
//! refusal reads: a conflict as a conflict and a missing destination as
//! missing (exit 1), neither labelled as a failure of the database.

use crate::support::TestDb;
use crate::{assert_cli_instant, remit, run};

const ADD_CRM: [&str; 8] = [
    "destination",
    "add",
    "--id",
    "crm",
    "--region",
    "eu",
    "--url",
    "https://hooks.example.com/in",
];

#[actix_rt::test]
async fn refusals_read_as_themselves_and_instants_end_in_z() {
    let db = TestDb::with_database_clock().await;
    let added = run(remit(&db).args(ADD_CRM));
    assert_eq!(
        String::from_utf8(added.stdout).unwrap(),
        "destination crm (eu) -> https://hooks.example.com/in\n"
    );
    // The same registration again is a repeat, not a conflict.
    run(remit(&db).args(ADD_CRM));

    let mut other_url = ADD_CRM;
    other_url[7] = "https://hooks.example.com/elsewhere";
    let conflict = remit(&db).args(other_url).output().unwrap();
    assert_eq!(conflict.status.code(), Some(1));
    assert_eq!(String::from_utf8(conflict.stdout).unwrap(), "");
    assert_eq!(
        String::from_utf8(conflict.stderr).unwrap(),
        "remit: conflict: destination crm already exists with different content (url)\n"
    );

    let missing = remit(&db)
        .args(["destination", "disable", "nope"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(missing.stderr).unwrap(),
        "remit: no destination with id nope\n"
    );

    let disabled = run(remit(&db).args([
        "destination",
        "disable",
        "crm",
        "--reason",
        "receiver retired",
    ]));
    let disabled = String::from_utf8(disabled.stdout).unwrap();
    let since = disabled
        .strip_prefix("destination crm (eu) disabled since ")
        .and_then(|rest| rest.strip_suffix(": receiver retired\n"))
        .unwrap_or_else(|| panic!("{disabled:?}"));
    assert_cli_instant(since);

    let enabled = run(remit(&db).args(["destination", "enable", "crm"]));
    assert_eq!(
        String::from_utf8(enabled.stdout).unwrap(),
        "destination crm (eu) enabled\n"
    );
}

/// `remit destination set | show | delete`: the settings as the API takes
/// them, a secret header never printed, a refusal naming its field, and a
/// deletion refused while tasks are live unless they go with it.
#[actix_rt::test]
async fn settings_are_set_shown_and_a_destination_deleted() {
    let db = TestDb::with_database_clock().await;
    run(remit(&db).args(ADD_CRM));
    let set = run(remit(&db).args([
        "destination",
        "set",
        "crm",
        "--rate-per-second",
        "5",
        "--timeout-ms",
        "3000",
        "--header",
        "X-Route: blue",
        "--secret-header",
        "Authorization: Bearer 0123456789abcdef-tail",
    ]));
    let shown: serde_json::Value = serde_json::from_slice(&set.stdout).unwrap();
    assert_eq!(shown["rate_per_second"], serde_json::json!(5.0));
    assert_eq!(shown["timeout_ms"], serde_json::json!(3000));
    assert_eq!(shown["headers"][0]["value"], serde_json::json!("blue"));
    assert_eq!(shown["headers"][1]["hint"], serde_json::json!("tail"));
    let again = run(remit(&db).args(["destination", "show", "crm"]));
    let text = String::from_utf8(again.stdout).unwrap();
    assert!(!text.contains("0123456789abcdef"), "{text}");
    assert!(text.contains("\"rate_per_second\": 5.0"), "{text}");

    let reset = run(remit(&db).args(["destination", "set", "crm", "--reset", "rate_per_second"]));
    let shown: serde_json::Value = serde_json::from_slice(&reset.stdout).unwrap();
    assert_eq!(shown["rate_per_second"], serde_json::Value::Null);
    assert_eq!(shown["timeout_ms"], serde_json::json!(3000));

    let refused = remit(&db)
        .args(["destination", "set", "crm", "--burst", "0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("burst"), "{stderr}");

    run(remit(&db).args([
        "schedule",
        "--tenant",
        "clinic-1",
        "--reminder",
        "r1",
        "--destination",
        "crm",
        "--region",
        "eu",
        "--not-before",
        "2099-01-01T00:00:00Z",
        "--payload",
        "{}",
    ]));
    let busy = remit(&db)
        .args(["destination", "delete", "crm"])
        .output()
        .unwrap();
    assert_eq!(busy.status.code(), Some(1));
    let stderr = String::from_utf8(busy.stderr).unwrap();
    assert!(stderr.contains("1 of its tasks have not ended"), "{stderr}");
    // In the command line's words, not the API's.
    assert!(stderr.contains("--cancel-tasks"), "{stderr}");
    assert!(!stderr.contains("cancel_tasks"), "{stderr}");
    let deleted = run(remit(&db).args(["destination", "delete", "crm", "--cancel-tasks"]));
    let deleted: serde_json::Value = serde_json::from_slice(&deleted.stdout).unwrap();
    assert_eq!(deleted["live_tasks"], serde_json::json!(1));
    assert_eq!(deleted["cancel_job"]["action"], serde_json::json!("cancel"));
    let gone = remit(&db)
        .args(["destination", "show", "crm"])
        .output()
        .unwrap();
    assert_ne!(gone.status.code(), Some(0));
}
