//! The console's routes, spelled every other way (as the API's are in
//! `api::path_variants`), by a signed-in read token with a valid CSRF
//! value: refused before any handler runs, so no spelling turns a read
//! session into an admin one or reaches a page by a path a proxy's rule
//! would not recognise.

use remit::domain::Region;
use remit::store::{Destinations, Schedule};

use super::browser::Browser;
use super::{console, task, token};
use crate::api::path_variants::variants;
use crate::support::{Backend, TestDb};

#[actix_rt::test]
async fn no_spelling_of_a_console_route_reaches_its_handler() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let crm = db.destination("crm", Region::EU).await;
    let id = task(&db, "clinic-1", "r-1", &crm, Region::EU, "x").await;
    let console = console(&db, Region::EU).await;
    let (_, secret) = token(&db, "read", &[]).await;
    let browser = Browser::signed_in(console.addr(), &secret).await;
    let csrf = browser.get("/console/overview").await.csrf();
    let task_path = format!("/console/tasks/{}", id.0);
    let routes = [
        ("GET", "/console/overview", "/console/overview".to_owned()),
        (
            "GET",
            "/console/destinations",
            "/console/destinations".to_owned(),
        ),
        ("GET", "/console/tasks/{id}", task_path.clone()),
        ("GET", "/console/audit", "/console/audit".to_owned()),
        (
            "GET",
            "/console/destinations/{id}",
            "/console/destinations/crm".to_owned(),
        ),
        (
            "POST",
            "/console/destinations/disable",
            "/console/destinations/disable".to_owned(),
        ),
        (
            "POST",
            "/console/destinations/rotate",
            "/console/destinations/rotate".to_owned(),
        ),
        (
            "POST",
            "/console/tasks/{id}/replay",
            format!("{task_path}/replay"),
        ),
        ("POST", "/console/replays", "/console/replays".to_owned()),
        ("POST", "/console/cancels", "/console/cancels".to_owned()),
    ];
    let mut tried = 0;
    for (method, template, path) in routes {
        for (spelling, expected) in variants(template, &path) {
            let answer = match method {
                "GET" => browser.get(&spelling).await,
                _ => {
                    let form = [("destination", "crm"), ("csrf", csrf.as_str())];
                    browser.post(&spelling, &form).await
                }
            };
            assert!(
                expected.admits(answer.status),
                "{method} {spelling} answered {}, expected {expected:?}",
                answer.status
            );
            tried += 1;
        }
    }
    assert!(tried > 200, "only {tried} tried");
    let destination = db.store.destination(&crm).await.unwrap().unwrap();
    assert!(destination.enabled, "no spelling disabled the destination");
    let task = db.store.task(id).await.unwrap().unwrap();
    assert_eq!(
        task.state,
        remit::domain::TaskState::Pending,
        "no spelling cancelled the task"
    );
    console.stop().await;
}
