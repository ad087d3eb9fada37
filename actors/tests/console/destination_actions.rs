//! A destination's own page acts on it, each act after a confirmation: a
//! "no" sends nothing; retry now makes the task a 429 put off for an hour
//! due, replay sends its failed task round again, disable and enable
//! switch it, delete is refused while tasks are live and then removes it
//! with them, and every act is in the audit log.

use std::time::Duration;

use remit::domain::{AuditFilter, TaskState};
use remit::store::{Destinations, Reports};

use crate::driver::{screenshot, wait_for, with_browser};
use crate::pages::{self, confirm, decline, open, text};
use crate::seed::{self, task_row, wait_for_state};
use crate::server::{RemitRun, ADMIN_TOKEN};
use crate::support::{Backend, Receiver, Reply, RetryAfter, TestDb};

#[actix_rt::test]
async fn every_act_on_a_destination_is_on_its_page_on_postgres() {
    act_from_the_page(Backend::Postgres).await;
}

#[actix_rt::test]
async fn every_act_on_a_destination_is_on_its_page_on_sqlite() {
    act_from_the_page(Backend::Sqlite).await;
}

async fn act_from_the_page(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    // The first request fails for good; the next is put off for an hour
    // (and pauses the destination as long).
    receiver.script(
        "/hook",
        vec![Reply::status(410)],
        Reply::status(429).retry_after(RetryAfter::Seconds(3600)),
    );
    let crm = seed::destination(&db, "crm", &receiver.url("/hook")).await;
    let remit = RemitRun::start(&db).await;
    let failed = seed::task(&db, "clinic-a", "renewal-1", &crm).await;
    wait_for_state(&db, &[failed], TaskState::Failed, Duration::from_secs(10)).await;
    let waiting = seed::task(&db, "clinic-a", "renewal-2", &crm).await;
    wait_for_state(
        &db,
        &[waiting],
        TaskState::RetryWait,
        Duration::from_secs(10),
    )
    .await;
    let put_off = task_row(&db, waiting).await.available_at;
    assert!(put_off > chrono::Utc::now() + chrono::Duration::minutes(30));

    let (db, remit) = (&db, &remit);
    with_browser(|client| async move {
        pages::sign_in(&client, remit, ADMIN_TOKEN).await;
        let page = "/console/destinations/crm";
        open(&client, remit, page, "section#actions").await;
        screenshot(&client, "destination-actions").await;

        // A "no" sends nothing.
        wait_for(&client, "#retry-now-button")
            .await
            .click()
            .await
            .unwrap();
        let asked = decline(&client).await;
        assert!(asked.contains("crm"), "{asked}");
        assert_eq!(pages::path(&client).await, page);
        assert_eq!(task_row(db, waiting).await.available_at, put_off);

        // Retry now: the task put off for an hour is due now (the
        // receiver's pause still holds it back from the wire).
        wait_for(&client, "#retry-now-button")
            .await
            .click()
            .await
            .unwrap();
        confirm(&client).await;
        let notice = text(&client, "p.notice").await;
        assert_eq!(notice, "1 task waiting for a retry made due now.");
        assert!(task_row(db, waiting).await.available_at <= chrono::Utc::now());

        // Replay its failed tasks: a job, which sends the failed one round
        // again.
        open(&client, remit, page, "#replay-failed-button").await;
        wait_for(&client, "#replay-failed-button")
            .await
            .click()
            .await
            .unwrap();
        confirm(&client).await;
        wait_for(&client, r#"div#replay-job[data-job-state="finished"]"#).await;
        assert_ne!(task_row(db, failed).await.state, TaskState::Failed);

        // Disable with a reason, then enable, each back on the page.
        open(&client, remit, page, "#disable-button").await;
        let reason = wait_for(
            &client,
            r#"form[data-action="disable"] input[name="reason"]"#,
        )
        .await;
        reason.send_keys("receiver moving").await.unwrap();
        wait_for(&client, "#disable-button")
            .await
            .click()
            .await
            .unwrap();
        confirm(&client).await;
        wait_for(&client, "#enable-button").await;
        assert_eq!(pages::path(&client).await, page);
        assert_eq!(
            text(&client, r#"td[data-field="state"]"#).await,
            "disabled: receiver moving"
        );
        assert!(!db.store.destination(&crm).await.unwrap().unwrap().enabled);
        wait_for(&client, "#enable-button")
            .await
            .click()
            .await
            .unwrap();
        confirm(&client).await;
        wait_for(&client, "#disable-button").await;
        assert!(db.store.destination(&crm).await.unwrap().unwrap().enabled);

        // Delete: refused while its tasks are live, saying how on this
        // page; then with them.
        wait_for(&client, "#delete-button")
            .await
            .click()
            .await
            .unwrap();
        let asked = confirm(&client).await;
        assert!(asked.contains("cannot be undone"), "{asked}");
        let refused = text(&client, "main").await;
        assert!(refused.contains("have not ended"), "{refused}");
        assert!(
            refused.contains("cancel its tasks that have not ended"),
            "{refused}"
        );
        assert!(db.store.destination(&crm).await.unwrap().is_some());
        open(&client, remit, page, "#delete-button").await;
        wait_for(
            &client,
            r#"form[data-action="delete"] input[name="cancel_tasks"]"#,
        )
        .await
        .click()
        .await
        .unwrap();
        wait_for(&client, "#delete-button")
            .await
            .click()
            .await
            .unwrap();
        confirm(&client).await;
        wait_for(&client, "table#destinations, main p").await;
        assert_eq!(pages::path(&client).await, "/console/destinations");
        assert!(db.store.destination(&crm).await.unwrap().is_none());

        // The audit log of all that reads at 1280 px: nothing off screen,
        // and each act on one line.
        client.set_window_size(1280, 900).await.unwrap();
        open(&client, remit, "/console/audit", "table#audit").await;
        screenshot(&client, "audit-1280").await;
        let measured = client
            .execute(
                "const page = document.documentElement;
                 const rows = [...document.querySelectorAll('table#audit tbody tr')];
                 const line = parseFloat(getComputedStyle(document.body).lineHeight) || 24;
                 return [page.scrollWidth - page.clientWidth,
                         Math.max(...rows.map(r => r.getBoundingClientRect().height)) / line,
                         rows.length];",
                vec![],
            )
            .await
            .unwrap();
        let [sideways, tallest, rows] = measured.as_array().unwrap().as_slice() else {
            panic!("{measured}");
        };
        assert_eq!(
            sideways.as_f64(),
            Some(0.0),
            "the audit page scrolls sideways"
        );
        assert!(rows.as_u64().unwrap() >= 6, "{measured}");
        assert!(
            tallest.as_f64().unwrap() < 2.0,
            "an audit row is {tallest} lines tall at 1280 px"
        );
    })
    .await;

    // Each act is in the audit log, by the console's token.
    let page = db
        .store
        .audit_page(&AuditFilter::default(), None, 100)
        .await
        .unwrap();
    let mut acts: Vec<&str> = page
        .entries
        .iter()
        .filter(|e| e.actor.kind() == "bootstrap")
        .map(|e| e.action.as_str())
        .collect();
    acts.reverse();
    assert_eq!(
        acts,
        [
            "destination.retry_now",
            "replay_job.create",
            "destination.disable",
            "destination.enable",
            "destination.delete",
            "cancel_job.create"
        ],
        "{page:#?}"
    );
}
