//! `remit destination rotate-secret` and `remit destination secrets`: the
//! generated secret is printed once, alone on standard output (a script
//! takes it as it is), the list never shows a value, and a refused flag
//! names itself once and writes nothing.

use remit::store::Destinations;

use crate::support::TestDb;

#[actix_rt::test]
async fn rotate_secret_adds_a_secret_and_lists_never_show_one() {
    let db = TestDb::with_database_clock().await;
    let first = remit_actors::signature::generate_secret();
    super::run(super::remit(&db).args([
        "destination",
        "add",
        "--id",
        "crm",
        "--region",
        "eu",
        "--url",
        "https://hooks.example.com/in",
        "--secret",
        &first,
    ]));

    let output = super::run(super::remit(&db).args(["destination", "rotate-secret", "crm"]));
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The secret and its newline, nothing else: `$(…)` takes it whole.
    let generated = stdout
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("{stdout:?}"))
        .to_owned();
    assert!(!generated.contains('\n'), "{stdout:?}");
    assert!(generated.starts_with("whsec_"), "{stdout:?}");
    assert!(remit_actors::signature::secret_key(&generated).is_ok());
    // What was done goes to standard error, the old secrets' end in the
    // command line's one form of an instant.
    let stderr = String::from_utf8(output.stderr).unwrap();
    let told = stderr
        .strip_prefix("destination crm: secret ")
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("{stderr:?}"));
    let (id, until) = told
        .split_once(" added (shown this once, above); the secrets valid before sign until ")
        .unwrap_or_else(|| panic!("{stderr:?}"));
    assert!(!id.is_empty() && !id.contains(' '), "{stderr:?}");
    super::assert_cli_instant(until);
    assert!(!stderr.contains(&generated), "the secret once, on stdout");

    // A secret of the caller's own is not printed back.
    let own = remit_actors::signature::generate_secret();
    let output = super::run(super::remit(&db).args([
        "destination",
        "rotate-secret",
        "crm",
        "--secret",
        &own,
        "--old-expires-at",
        "2099-01-01T00:00:00+02:00",
    ]));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.ends_with(" added; the secrets valid before sign until 2098-12-31T22:00:00Z\n"),
        "{stderr:?}"
    );
    assert!(!stderr.contains(&own), "{stderr:?}");

    let crm = remit::domain::DestinationId::new("crm").unwrap();
    let target = db.store.send_target(&crm).await.unwrap().unwrap();
    let signing: Vec<&str> = target.secrets_at(chrono::Utc::now()).collect();
    assert_eq!(signing, [own.as_str(), generated.as_str(), first.as_str()]);

    // A malformed secret is named once, not "secret: secret: …".
    let refused = super::remit(&db)
        .args([
            "destination",
            "rotate-secret",
            "crm",
            "--secret",
            "whsec_short",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(String::from_utf8(refused.stdout).unwrap(), "");
    assert_eq!(
        String::from_utf8(refused.stderr).unwrap(),
        "remit: secret: must be whsec_ followed by standard base64 of 24 to 64 bytes\n"
    );

    let refused = super::remit(&db)
        .args([
            "destination",
            "rotate-secret",
            "crm",
            "--old-expires-at",
            "2020-01-01T00:00:00Z",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("old_expires_at"), "{stderr}");

    let listed = super::run(super::remit(&db).args(["destination", "secrets", "crm"]));
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert!(!listed.contains("whsec_"), "{listed}");
    assert!(listed.lines().last().unwrap().ends_with("expires never"));
    for line in listed.lines() {
        let created = line.split("  ").nth(1).unwrap();
        super::assert_cli_instant(created.strip_prefix("created ").unwrap());
    }
}
