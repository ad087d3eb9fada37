//! The overview names, for the person on call, the destinations that
//! need attention: disabled (with why), paused and failing, with counts;
//! and says so when none does.

use remit::domain::Region;
use remit::store::Store;

use super::browser::Browser;
use super::console;
use crate::support::{Backend, TestDb, API_TOKEN};

#[actix_rt::test]
async fn the_overview_names_the_destinations_in_trouble() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        let quiet = db.destination("quiet", Region::EU).await;
        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
        let page = browser.get("/console/overview").await;
        assert!(page.body.contains(r#"data-trouble="none""#), "{backend:?}");

        let crm = db.destination("crm", Region::EU).await;
        let billing = db.destination("billing", Region::EU).await;
        db.store
            .disable_destination(&crm, Some("receiver retired".into()))
            .await
            .unwrap();
        db.store
            .pause_destination(&billing, chrono::Duration::minutes(10))
            .await
            .unwrap();
        let page = browser.get("/console/overview").await;
        assert_eq!(page.status, 200, "{backend:?}: {}", page.body);
        assert!(
            page.body
                .contains(r#"data-trouble="disabled" data-destination="crm""#),
            "{backend:?}: {}",
            page.body
        );
        assert!(
            page.body.contains("disabled: receiver retired"),
            "{backend:?}"
        );
        assert!(
            page.body
                .contains(r#"data-trouble="paused" data-destination="billing""#),
            "{backend:?}"
        );
        assert!(
            page.body
                .contains(r#"data-trouble-count="disabled">1 disabled"#),
            "{backend:?}"
        );
        assert!(
            !page
                .body
                .contains(&format!(r#"data-destination="{quiet}""#)),
            "{backend:?}: a healthy destination is not named"
        );
        console.stop().await;
    }
}
