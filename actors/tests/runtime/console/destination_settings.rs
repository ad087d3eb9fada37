//! A destination's settings page: the form changes what the API changes,
//! an empty field gives the setting back to the runtime, a kept secret
//! header stays without being shown, and a refusal names its field.

use remit::domain::{HeaderValue, Region};
use remit::store::Destinations;

use super::browser::Browser;
use super::console;
use crate::support::{Backend, TestDb, API_TOKEN};

#[actix_rt::test]
async fn the_settings_form_changes_the_destination() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        let crm = db.destination("crm", Region::EU).await;
        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
        let page = browser.get("/console/destinations").await;
        assert!(
            page.body.contains("/console/destinations/crm/settings"),
            "{backend:?}: a link to the settings"
        );
        let csrf = page.csrf();
        let answer = browser
            .post(
                "/console/destinations/crm/settings",
                &[
                    ("csrf", &csrf),
                    ("rate_per_second", "2.5"),
                    ("burst", "4"),
                    ("timeout_ms", ""),
                    ("headers", "X-Route: blue\r\n"),
                    ("secret_name", "Authorization"),
                    ("secret_value", "Bearer 0123456789abcdef-tail"),
                ],
            )
            .await;
        assert_eq!(answer.status, 303, "{backend:?}: {}", answer.body);
        let d = db.store.destination(&crm).await.unwrap().unwrap();
        assert_eq!(d.settings.rate_per_second, Some(2.5), "{backend:?}");
        assert_eq!(d.settings.burst, Some(4), "{backend:?}");
        assert_eq!(d.settings.timeout_ms, None, "{backend:?}");
        assert_eq!(d.settings.headers.len(), 2, "{backend:?}");

        let page = browser.get("/console/destinations/crm/settings").await;
        assert_eq!(page.status, 200, "{backend:?}: {}", page.body);
        assert!(page.body.contains("X-Route: blue") || page.body.contains("x-route: blue"));
        assert!(!page.body.contains("0123456789abcdef"), "{backend:?}");
        assert!(page.body.contains("…tail"), "{backend:?}: the hint");

        // Saved again with the secret kept and the burst emptied.
        let answer = browser
            .post(
                "/console/destinations/crm/settings",
                &[
                    ("csrf", &csrf),
                    ("rate_per_second", "2.5"),
                    ("burst", ""),
                    ("headers", ""),
                    ("keep_secret", "authorization"),
                ],
            )
            .await;
        assert_eq!(answer.status, 303, "{backend:?}: {}", answer.body);
        let d = db.store.destination(&crm).await.unwrap().unwrap();
        assert_eq!(d.settings.burst, None, "{backend:?}");
        assert_eq!(d.settings.headers.len(), 1, "{backend:?}");
        assert!(matches!(
            &d.settings.headers[0].value,
            HeaderValue::Secret { hint: Some(h), .. } if h == "tail"
        ));

        let refused = browser
            .post(
                "/console/destinations/crm/settings",
                &[("csrf", &csrf), ("burst", "0")],
            )
            .await;
        assert_eq!(refused.status, 400, "{backend:?}: {}", refused.body);
        assert!(refused.body.contains("burst"), "{backend:?}");
        let missing = browser.get("/console/destinations/nope/settings").await;
        assert_eq!(missing.status, 404, "{backend:?}");
        console.stop().await;
    }
}

/// The form never undoes a change made meanwhile: a save against the
/// version the page showed is refused once the destination changed (here
/// through the API), and a save sends only what the operator changed, so
/// a setting someone else changed before the page was loaded stays.
#[actix_rt::test]
async fn a_save_never_undoes_a_change_made_meanwhile() {
    let db = TestDb::new().await;
    let crm = db.destination("crm", Region::EU).await;
    let console = console(&db, Region::EU).await;
    let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
    let version = |body: &str| {
        let at = body
            .find(r#"name="version" value=""#)
            .expect("the form's version")
            + 22;
        body[at..at + body[at..].find('"').unwrap()].to_owned()
    };
    let page = browser.get("/console/destinations/crm/settings").await;
    let (csrf, shown) = (page.csrf(), version(&page.body));

    // Meanwhile, another admin sets the rate.
    let change = remit::domain::DestinationChange {
        rate_per_second: remit::domain::Setting::Set(7.0),
        ..Default::default()
    };
    db.store.update_destination(&crm, change).await.unwrap();
    // The form as the page showed it (no rate), with the burst changed.
    let save = |version: String, rate: &'static str| {
        let csrf = csrf.clone();
        let browser = &browser;
        async move {
            browser
                .post(
                    "/console/destinations/crm/settings",
                    &[
                        ("csrf", csrf.as_str()),
                        ("version", version.as_str()),
                        ("rate_per_second", rate),
                        ("burst", "4"),
                        ("headers", ""),
                    ],
                )
                .await
        }
    };
    let refused = save(shown, "").await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(
        refused.body.contains("changed by someone else"),
        "{}",
        refused.body
    );
    let d = db.store.destination(&crm).await.unwrap().unwrap();
    assert_eq!(
        (d.settings.rate_per_second, d.settings.burst),
        (Some(7.0), None)
    );

    // Loaded again, the page shows the rate; a save of the burst alone
    // leaves it.
    let page = browser.get("/console/destinations/crm/settings").await;
    assert!(page.body.contains(r#"value="7""#), "the rate shown");
    let saved = save(version(&page.body), "7").await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let d = db.store.destination(&crm).await.unwrap().unwrap();
    assert_eq!(
        (d.settings.rate_per_second, d.settings.burst),
        (Some(7.0), Some(4))
    );
    console.stop().await;
}
