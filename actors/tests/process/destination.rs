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
