//! A bulk replay from the tasks page, filtered by tenant: every failed
//! task of that tenant is replayed and delivered, another tenant's failed
//! tasks stay failed.

use std::time::Duration;

use remit::domain::{TaskId, TaskState};
use remit::store::{JobFilter, Jobs};

use crate::driver::{screenshot, wait_for, with_browser};
use crate::pages::{self, assert_no_payload, attr, open};
use crate::seed::{self, task_row, wait_for_state};
use crate::server::{RemitRun, ADMIN_TOKEN, REGION};
use crate::support::{Backend, Receiver, Reply, TestDb};

#[actix_rt::test]
async fn a_bulk_replay_by_tenant_delivers_its_tasks_alone_on_postgres() {
    bulk_replay_by_tenant(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_bulk_replay_by_tenant_delivers_its_tasks_alone_on_sqlite() {
    bulk_replay_by_tenant(Backend::Sqlite).await;
}

async fn bulk_replay_by_tenant(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![], Reply::status(410));
    let crm = seed::destination(&db, "crm", &receiver.url("/hook")).await;
    let mut ward_a = Vec::new();
    let mut ward_b = Vec::new();
    for n in 0..3 {
        ward_a.push(seed::task(&db, "clinic-a", &format!("a-{n}"), &crm).await);
        ward_b.push(seed::task(&db, "clinic-b", &format!("b-{n}"), &crm).await);
    }
    let remit = RemitRun::start(&db).await;
    let all: Vec<TaskId> = ward_a.iter().chain(&ward_b).copied().collect();
    wait_for_state(&db, &all, TaskState::Failed, Duration::from_secs(10)).await;
    receiver.script("/hook", vec![], Reply::ok());

    let (db, remit, ward_a_ref) = (&db, &remit, &ward_a);
    let job_path = with_browser(|client| async move {
        pages::sign_in(&client, remit, ADMIN_TOKEN).await;
        open(&client, remit, "/console/tasks", "form#task-search").await;
        // From the keyboard: type the tenant and press Enter.
        let tenant = wait_for(&client, r#"form#task-search input[name="tenant"]"#).await;
        tenant.send_keys("clinic-a\u{E007}").await.unwrap();
        wait_for(&client, "table#tasks").await;
        let url = client.current_url().await.unwrap();
        assert!(
            url.query_pairs().any(|(k, v)| k == "tenant" && v == "clinic-a"),
            "{url}"
        );
        let mut listed = Vec::new();
        for row in client
            .find_all(fantoccini::Locator::Css("table#tasks tr[data-task-id]"))
            .await
            .unwrap()
        {
            listed.push(row.attr("data-task-id").await.unwrap().unwrap());
        }
        let mut expected: Vec<String> = ward_a_ref.iter().map(|id| id.0.to_string()).collect();
        listed.sort();
        expected.sort();
        assert_eq!(listed, expected, "clinic-a's tasks and no other");
        let hidden = r#"form#bulk-replay[method="post"][action="/console/replays"] input[type="hidden"][name="tenant"]"#;
        assert_eq!(attr(&client, hidden, "value").await, "clinic-a");
        assert_no_payload(&client).await;
        screenshot(&client, "tasks").await;

        wait_for(&client, "#bulk-replay-button")
            .await
            .click()
            .await
            .unwrap();
        // The job's page refreshes itself until the job is done.
        let finished = r#"div#replay-job[data-job-state="finished"]"#;
        wait_for(&client, finished).await;
        assert_eq!(attr(&client, finished, "data-replayed").await, "3");
        let job_path = pages::path(&client).await;
        screenshot(&client, "replay-job").await;
        job_path
    })
    .await;

    wait_for_state(db, &ward_a, TaskState::Delivered, Duration::from_secs(10)).await;
    for id in &ward_b {
        let row = task_row(db, *id).await;
        assert_eq!(
            (row.state, row.attempt_count),
            (TaskState::Failed, 1),
            "{} was not to be replayed",
            row.reminder_id.as_str()
        );
    }
    assert_eq!(receiver.requests_to("/hook").len(), 6 + 3);

    let job_id = job_path
        .strip_prefix("/console/replays/")
        .and_then(|id| id.parse::<uuid::Uuid>().ok())
        .unwrap_or_else(|| panic!("{job_path} is not a replay job's page"));
    let job = db.store.job(job_id).await.unwrap().unwrap();
    assert_eq!(job.region, REGION);
    assert_eq!(
        job.filter,
        JobFilter {
            tenant: Some(remit::domain::TenantId::new("clinic-a").unwrap()),
            ..JobFilter::default()
        }
    );
    assert_eq!((job.replayed, job.finished()), (3, true));
}
