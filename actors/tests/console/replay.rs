//! A failed task's page, and its replay from there: refused without the
//! session's CSRF value, then done with the button and delivered.

use std::time::Duration;

use remit::domain::TaskState;

use crate::driver::{screenshot, wait_for, with_browser};
use crate::pages::{self, assert_no_payload, count, forged_post, open, text};
use crate::seed::{self, task_row, wait_for_state};
use crate::server::{RemitRun, ADMIN_TOKEN};
use crate::support::{Backend, Receiver, Reply, TestDb};

#[actix_rt::test]
async fn a_failed_task_is_replayed_from_its_page_on_postgres() {
    replay_from_the_task_page(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_failed_task_is_replayed_from_its_page_on_sqlite() {
    replay_from_the_task_page(Backend::Sqlite).await;
}

async fn replay_from_the_task_page(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    // 410 Gone is not retried: the task fails on its first attempt.
    receiver.script("/hook", vec![], Reply::status(410));
    let crm = seed::destination(&db, "crm", &receiver.url("/hook")).await;
    let id = seed::task(&db, "clinic-a", "renewal-1", &crm).await;
    let remit = RemitRun::start(&db).await;
    wait_for_state(&db, &[id], TaskState::Failed, Duration::from_secs(10)).await;
    let failed = task_row(&db, id).await;
    // The receiver is back.
    receiver.script("/hook", vec![], Reply::ok());

    let (db, remit, failed_ref) = (&db, &remit, &failed);
    with_browser(|client| async move {
        pages::sign_in(&client, remit, ADMIN_TOKEN).await;
        let page = format!("/console/tasks/{}", id.0);
        open(&client, remit, &page, r#"dd[data-field="state"]"#).await;
        assert_eq!(text(&client, r#"dd[data-field="state"]"#).await, "failed");
        assert_eq!(
            text(&client, r#"[data-field="idempotency_key"]"#).await,
            failed_ref.idempotency_key
        );
        assert_eq!(count(&client, "table#attempts tr.attempt").await, 1);
        let form = format!(r#"form[data-action="replay"][method="post"][action="{page}/replay"]"#);
        assert_eq!(count(&client, &form).await, 1, "{form}");
        assert_no_payload(&client).await;
        screenshot(&client, "task").await;

        // The admin's own session, without its CSRF value: refused.
        let replay = format!("{page}/replay");
        assert_eq!(forged_post(&client, &replay, &[]).await, 403);
        let forged = [("csrf", "not-the-session-value")];
        assert_eq!(forged_post(&client, &replay, &forged).await, 403);
        assert_eq!(task_row(db, id).await.state, TaskState::Failed);

        wait_for(&client, "#replay-button")
            .await
            .click()
            .await
            .unwrap();
        wait_for_state(db, &[id], TaskState::Delivered, Duration::from_secs(10)).await;
        // 303 back to the task page, which now says so.
        open(&client, remit, &page, r#"dd[data-field="state"]"#).await;
        assert_eq!(pages::path(&client).await, page);
        assert_eq!(
            text(&client, r#"dd[data-field="state"]"#).await,
            "delivered"
        );
        assert_eq!(count(&client, "table#attempts tr.attempt").await, 2);
        assert_eq!(
            count(&client, "#replay-button").await,
            0,
            "only failed tasks"
        );
    })
    .await;
    let delivered = task_row(db, id).await;
    assert_eq!(delivered.idempotency_key, failed.idempotency_key);
    assert_eq!(receiver.requests_to("/hook").len(), 2);
}
