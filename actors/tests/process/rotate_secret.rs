//! `remit destination rotate-secret` and `remit destination secrets`: the
//! generated secret is printed once, the list never shows a value, and a
//! refused flag names itself and writes nothing.

use remit::store::Store;

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
    let generated = stdout
        .lines()
        .find(|l| l.starts_with("whsec_"))
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_owned();
    assert!(remit_actors::signature::secret_key(&generated).is_ok());

    let crm = remit::domain::DestinationId::new("crm").unwrap();
    let target = db.store.send_target(&crm).await.unwrap().unwrap();
    let signing: Vec<&str> = target.secrets_at(chrono::Utc::now()).collect();
    assert_eq!(signing, [generated.as_str(), first.as_str()]);

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
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(!listed.contains("whsec_"), "{listed}");
    assert!(listed.lines().last().unwrap().ends_with("expires never"));
}
