//! The audit log in the console, on both stores: a change made from the
//! console's forms is recorded as the signed-in token (its id and name);
//! the audit page lists it with the API's filters, linked from the
//! navigation for admin tokens only; a read token is refused the page.

use remit::domain::{Region, TokenGrant};
use remit::store::ApiTokens;

use super::browser::Browser;
use super::{console, token};
use crate::support::{Backend, TestDb};

#[actix_rt::test]
async fn a_console_change_is_recorded_as_the_signed_in_token_and_listed() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        db.destination("crm", Region::EU).await;
        let grant = TokenGrant {
            scope: "admin".into(),
            name: Some("night shift".into()),
            ..TokenGrant::default()
        };
        let (new, secret) = grant.check(chrono::Utc::now()).unwrap();
        let admin = db.store.add_api_token(new).await.unwrap();
        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), &secret).await;

        let page = browser.get("/console/destinations").await;
        assert!(
            page.body.contains(r#"href="/console/audit""#),
            "{backend:?}: linked"
        );
        let csrf = page.csrf();
        let form = [
            ("destination", "crm"),
            ("reason", "night maintenance"),
            ("csrf", &csrf),
        ];
        let disabled = browser.post("/console/destinations/disable", &form).await;
        assert_eq!(disabled.status, 303, "{backend:?}: {}", disabled.body);

        let listed = browser.get("/console/audit").await;
        assert_eq!(listed.status, 200, "{backend:?}: {}", listed.body);
        let rows: Vec<&str> = listed.body.split("<tr data-entry-id=").skip(1).collect();
        // The destination's registration and the token, made here by remit
        // itself (`system`), then the disable, newest first.
        assert_eq!(rows.len(), 3, "{backend:?}: {}", listed.body);
        let who = format!("token {} (night shift)", admin.id);
        assert!(rows[0].contains(&who), "{backend:?}: {}", rows[0]);
        assert!(rows[0].contains("destination.disable") && rows[0].contains("night maintenance"));
        // One line of what changed: the fields the disable set, not the
        // whole settings before and after.
        for changed in ["enabled", "disabled_reason"] {
            let field = format!(r#"data-field="{changed}""#);
            assert!(rows[0].contains(&field), "{backend:?}: {}", rows[0]);
        }
        assert!(rows[0].contains("true</span> → <span"), "{}", rows[0]);
        assert!(!rows[0].contains(r#"data-field="url""#), "{}", rows[0]);
        assert!(rows[1].contains("system") && rows[1].contains("token.create"));
        assert!(rows[2].contains("system") && rows[2].contains("destination.create"));
        assert!(
            !listed.body.contains(&secret),
            "{backend:?}: never the token"
        );

        let filtered = browser
            .get("/console/audit?action=destination.create")
            .await;
        assert_eq!(
            filtered.body.matches("<tr data-entry-id=").count(),
            1,
            "{backend:?}"
        );
        let by_who = browser
            .get(&format!("/console/audit?actor={}", admin.id))
            .await;
        assert_eq!(
            by_who.body.matches("<tr data-entry-id=").count(),
            1,
            "{backend:?}"
        );
        let refused = browser.get("/console/audit?target_kind=planet").await;
        assert_eq!(refused.status, 400, "{backend:?}: {}", refused.body);
        assert!(refused.body.contains("target_kind"), "{backend:?}");

        let (_, read) = token(&db, "read", &[]).await;
        let reader = Browser::signed_in(console.addr(), &read).await;
        let page = reader.get("/console/destinations").await;
        assert!(
            !page.body.contains(r#"href="/console/audit""#),
            "{backend:?}: not linked"
        );
        assert_eq!(
            reader.get("/console/audit").await.status,
            403,
            "{backend:?}"
        );
        console.stop().await;
    }
}
