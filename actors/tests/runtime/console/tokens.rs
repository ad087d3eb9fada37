//! What each kind of token sees and may do in the console.

use remit::domain::Region;
use remit::store::Destinations;

use super::browser::Browser;
use super::{console, task, token};
use crate::support::{Backend, TestDb, API_TOKEN};

#[actix_rt::test]
async fn a_read_token_sees_no_action_and_its_posts_are_refused() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let crm = db.destination("crm", Region::EU).await;
    let id = task(&db, "clinic-1", "r-1", &crm, Region::EU, "x").await;
    let console = console(&db, Region::EU).await;
    let admin = Browser::signed_in(console.addr(), API_TOKEN).await;
    assert!(admin
        .get("/console/destinations")
        .await
        .body
        .contains("data-action="));
    assert!(admin
        .get("/console/tasks")
        .await
        .body
        .contains(r#"id="bulk-replay""#));

    for scope in ["read", "schedule"] {
        let (_, secret) = token(&db, scope, &[]).await;
        let browser = Browser::signed_in(console.addr(), &secret).await;
        let mut csrf = String::new();
        for path in [
            "/console/overview".to_owned(),
            "/console/destinations".to_owned(),
            "/console/tasks".to_owned(),
            format!("/console/tasks/{}", id.0),
        ] {
            let page = browser.get(&path).await;
            assert_eq!(page.status, 200, "{scope} {path}");
            assert!(!page.body.contains("data-action"), "{scope} {path}");
            assert!(!page.body.contains("bulk-replay"), "{scope} {path}");
            // The sign-out form carries the session's value.
            csrf = page.csrf();
        }
        // Forged POSTs with a valid CSRF value are refused all the same.
        for (path, form) in [
            (
                "/console/destinations/disable".to_owned(),
                vec![("destination", "crm"), ("csrf", csrf.as_str())],
            ),
            (
                "/console/destinations/rotate".to_owned(),
                vec![("destination", "crm"), ("csrf", csrf.as_str())],
            ),
            (
                format!("/console/tasks/{}/replay", id.0),
                vec![("csrf", csrf.as_str())],
            ),
            ("/console/replays".to_owned(), vec![("csrf", csrf.as_str())]),
        ] {
            let refused = browser.post(&path, &form).await;
            assert_eq!(refused.status, 403, "{scope} {path}: {}", refused.body);
        }
    }
    let crm = db.store.destination(&crm).await.unwrap().unwrap();
    assert!(crm.enabled);
    console.stop().await;
}

#[actix_rt::test]
async fn a_tenant_limited_token_sees_only_its_tenants() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let crm = db.destination("crm", Region::EU).await;
    let mine = task(&db, "clinic-1", "r-1", &crm, Region::EU, "x").await;
    let theirs = task(&db, "clinic-2", "r-2", &crm, Region::EU, "x").await;
    let console = console(&db, Region::EU).await;
    let (_, secret) = token(&db, "read", &["clinic-1"]).await;
    // Its session starts on the task search: the overview is not for it.
    let mut first = Browser::new(console.addr());
    let landed = first.sign_in(&secret).await;
    assert_eq!(landed.header("location"), "/console/tasks");
    assert_eq!(
        first.get("/console").await.header("location"),
        "/console/tasks"
    );
    let browser = Browser::signed_in(console.addr(), &secret).await;

    for path in [
        "/console/tasks",
        "/console/tasks?tenant=clinic-2",
        "/console/tasks?destination=crm",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 200, "{path}");
        let theirs_listed = page
            .body
            .contains(&format!(r#"data-task-id="{}""#, theirs.0));
        assert!(!theirs_listed, "{path}: another tenant's task is listed");
        let mine_listed = page.body.contains(&format!(r#"data-task-id="{}""#, mine.0));
        assert_eq!(mine_listed, !path.contains("clinic-2"), "{path}");
    }
    assert_eq!(
        browser
            .get(&format!("/console/tasks/{}", mine.0))
            .await
            .status,
        200
    );
    let hidden = browser.get(&format!("/console/tasks/{}", theirs.0)).await;
    assert_eq!(hidden.status, 404);
    let missing = browser
        .get(&format!("/console/tasks/{}", uuid::Uuid::new_v4()))
        .await;
    assert_eq!(missing.status, 404);
    // Answered as a task that does not exist: nothing of it shows.
    assert!(hidden.body.contains("no task with id"), "{}", hidden.body);
    assert!(missing.body.contains("no task with id"), "{}", missing.body);
    assert!(!hidden.body.contains("clinic-2"), "{}", hidden.body);
    for path in ["/console/overview", "/console/destinations"] {
        assert_eq!(browser.get(path).await.status, 403, "{path}");
    }

    // The admin sees both.
    let admin = Browser::signed_in(console.addr(), API_TOKEN).await;
    let page = admin.get("/console/tasks").await;
    for id in [mine, theirs] {
        assert!(page.body.contains(&format!(r#"data-task-id="{}""#, id.0)));
    }
    console.stop().await;
}
