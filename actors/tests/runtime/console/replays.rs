//! Replaying from the console against a running region: one failed task
//! from its page, and every failed task of a tenant by a bulk replay (a
//! replay job), each then delivered; tasks outside the filter stay failed.
//! And a bulk cancel of a tenant's tasks from the task search, worked by
//! `remit console`'s own job runner.

use remit::store::Schedule;
use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};

use super::browser::Browser;
use super::{console, task, token};
use crate::support::{self, Backend, Receiver, Reply, TestDb, API_TOKEN};

#[actix_rt::test]
async fn failed_tasks_are_replayed_one_or_in_bulk_and_delivered() {
    let db = TestDb::with_database_clock().await;
    let receiver = Receiver::start();
    // The first four webhooks are refused for good (410); later ones land.
    receiver.script("/hook", vec![Reply::status(410); 4], Reply::ok());
    let runtime = support::start(support::config(&db, Region::EU, "eu-1"), &db.store).await;
    let crm = support::destination(&db, "crm", Region::EU, &receiver.url("/hook"), None).await;
    let a1 = task(&db, "clinic-a", "a-1", &crm, Region::EU, "x").await;
    let a2 = task(&db, "clinic-a", "a-2", &crm, Region::EU, "x").await;
    let b1 = task(&db, "clinic-b", "b-1", &crm, Region::EU, "x").await;
    let c1 = task(&db, "clinic-c", "c-1", &crm, Region::EU, "x").await;
    let all = [a1, a2, b1, c1];
    support::wait_for_state(&db, &all, TaskState::Failed, Duration::from_secs(10)).await;

    let browser = Browser::signed_in(runtime.api_addr(), API_TOKEN).await;
    // One task, from its page.
    let path = format!("/console/tasks/{}", c1.0);
    let page = browser.get(&path).await;
    assert!(page.body.contains(r#"id="replay-button""#), "{}", page.body);
    let replayed = browser
        .post(&format!("{path}/replay"), &[("csrf", &page.csrf())])
        .await;
    assert_eq!(replayed.status, 303, "{}", replayed.body);
    assert_eq!(replayed.header("location"), path);
    support::wait_for_state(&db, &[c1], TaskState::Delivered, Duration::from_secs(10)).await;

    // Every failed task of clinic-a, by a bulk replay.
    let search = browser
        .get("/console/tasks?tenant=clinic-a&state=failed")
        .await;
    assert!(
        search.body.contains(r#"id="bulk-replay""#),
        "{}",
        search.body
    );
    assert!(search.body.contains(r#"name="tenant" value="clinic-a""#));
    // An empty filter would replay the whole region: refused.
    let csrf = search.csrf();
    let refused = browser
        .post(
            "/console/replays",
            &[("csrf", csrf.as_str()), ("tenant", "")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("filter:"), "{}", refused.body);
    let created = browser
        .post(
            "/console/replays",
            &[
                ("csrf", &search.csrf()),
                ("tenant", "clinic-a"),
                ("reason", ""),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let job = created.header("location").to_owned();
    assert!(job.starts_with("/console/replays/"), "{job}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let page = browser.get(&job).await;
        assert_eq!(page.status, 200, "{}", page.body);
        if page.body.contains(r#"data-job-state="finished""#) {
            assert!(page.body.contains(r#"data-replayed="2""#), "{}", page.body);
            break;
        }
        assert!(page.body.contains(r#"data-job-state="running""#));
        assert!(
            Instant::now() < deadline,
            "the job did not finish:\n{}",
            page.body
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    support::wait_for_state(
        &db,
        &[a1, a2],
        TaskState::Delivered,
        Duration::from_secs(10),
    )
    .await;
    let b1 = db.store.task(b1).await.unwrap().unwrap();
    assert_eq!(b1.state, TaskState::Failed, "outside the filter");
    // The overview still counts the four failures of the hour, the three
    // replayed and delivered since among them.
    let overview = browser.get("/console/overview").await;
    assert!(
        overview.body.contains(
            r#"<tr data-reason="http_410"><td>http_410</td><td class="number">4</td></tr>"#
        ),
        "{}",
        overview.body
    );
    runtime.shutdown().await;
}

#[actix_rt::test]
async fn matching_tasks_are_cancelled_in_bulk_from_the_task_search() {
    let db = TestDb::running_on(Backend::Sqlite).await;
    let crm = db.destination("crm", Region::EU).await;
    // No delivery runtime: `remit console` alone, which works the job.
    let a1 = task(&db, "clinic-a", "a-1", &crm, Region::EU, "x").await;
    let a2 = task(&db, "clinic-a", "a-2", &crm, Region::EU, "x").await;
    let b1 = task(&db, "clinic-b", "b-1", &crm, Region::EU, "x").await;
    let console = console(&db, Region::EU).await;
    let (admin, secret) = token(&db, "admin", &[]).await;
    let browser = Browser::signed_in(console.addr(), &secret).await;

    let search = browser.get("/console/tasks?tenant=clinic-a").await;
    assert!(
        search.body.contains(r#"id="bulk-cancel""#),
        "{}",
        search.body
    );
    assert!(search.body.contains("Cancel every matching task"));
    let csrf = search.csrf();
    // A failure reason is a replay's only, and no filter would cancel the
    // whole region: both refused.
    for (form, named) in [
        (
            vec![("tenant", "clinic-a"), ("reason", "max_attempts")],
            "reason:",
        ),
        (vec![("tenant", "")], "filter:"),
    ] {
        let mut form = form;
        form.push(("csrf", csrf.as_str()));
        let refused = browser.post("/console/cancels", &form).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert!(refused.body.contains(named), "{}", refused.body);
    }
    // Without the session's CSRF value: refused.
    let forged = browser
        .post("/console/cancels", &[("tenant", "clinic-a"), ("csrf", "x")])
        .await;
    assert_eq!(forged.status, 403, "{}", forged.body);

    let created = browser
        .post(
            "/console/cancels",
            &[("csrf", csrf.as_str()), ("tenant", "clinic-a")],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let job = created.header("location").to_owned();
    assert!(job.starts_with("/console/replays/"), "{job}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let page = browser.get(&job).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("Bulk cancel"), "{}", page.body);
        assert!(
            page.body.contains(r#"data-action="cancel""#),
            "{}",
            page.body
        );
        if page.body.contains(r#"data-job-state="finished""#) {
            assert!(page.body.contains(r#"data-cancelled="2""#), "{}", page.body);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the job did not finish:\n{}",
            page.body
        );
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    for id in [a1, a2] {
        let t = db.store.task(id).await.unwrap().unwrap();
        assert_eq!(t.state, TaskState::Cancelled);
        assert_eq!(t.cancelled.map(|c| c.by), Some(admin.id.to_string()));
    }
    let b1 = db.store.task(b1).await.unwrap().unwrap();
    assert_eq!(b1.state, TaskState::Pending, "outside the filter");

    // A read token sees no bulk form and may not post one.
    let (_, read) = token(&db, "read", &[]).await;
    let reader = Browser::signed_in(console.addr(), &read).await;
    let page = reader.get("/console/tasks?tenant=clinic-b").await;
    assert!(!page.body.contains(r#"id="bulk-cancel""#), "{}", page.body);
    let refused = reader
        .post(
            "/console/cancels",
            &[("csrf", page.csrf().as_str()), ("tenant", "clinic-b")],
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let b1 = db.store.task(b1.id).await.unwrap().unwrap();
    assert_eq!(b1.state, TaskState::Pending);
    console.stop().await;
}
