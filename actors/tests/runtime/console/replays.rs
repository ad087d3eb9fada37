//! Replaying from the console against a running region: one failed task
//! from its page, and every failed task of a tenant by a bulk replay (a
//! replay job), each then delivered; tasks outside the filter stay failed.

use std::time::{Duration, Instant};

use remit::domain::{Region, TaskState};
use remit::store::Store;

use super::browser::Browser;
use super::task;
use crate::support::{self, Receiver, Reply, TestDb, API_TOKEN};

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
    runtime.shutdown().await;
}
