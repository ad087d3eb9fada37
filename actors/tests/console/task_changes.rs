//! A task's page moves and cancels it: refused without the session's CSRF
//! value, then done with the forms, and the page says who cancelled.

use remit::domain::TaskState;

use crate::driver::{wait_for, with_browser};
use crate::pages::{self, count, forged_post, open, text};
use crate::seed::{self, task_row, wait_for_state};
use crate::server::{RemitRun, ADMIN_TOKEN};
use crate::support::{Backend, TestDb};

#[actix_rt::test]
async fn a_task_is_moved_then_cancelled_from_its_page_on_postgres() {
    move_then_cancel(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_task_is_moved_then_cancelled_from_its_page_on_sqlite() {
    move_then_cancel(Backend::Sqlite).await;
}

async fn move_then_cancel(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let crm = seed::destination(&db, "crm", "http://127.0.0.1:9/hook").await;
    let tomorrow = chrono::Utc::now() + chrono::Duration::days(1);
    let id = seed::task_at(&db, "clinic-a", "renewal-1", &crm, tomorrow).await;
    let remit = RemitRun::start(&db).await;

    let (db, remit) = (&db, &remit);
    with_browser(|client| async move {
        pages::sign_in(&client, remit, ADMIN_TOKEN).await;
        let page = format!("/console/tasks/{}", id.0);
        open(&client, remit, &page, r#"dd[data-field="state"]"#).await;
        assert_eq!(text(&client, r#"dd[data-field="state"]"#).await, "pending");

        for action in ["cancel", "reschedule"] {
            let path = format!("{page}/{action}");
            assert_eq!(forged_post(&client, &path, &[]).await, 403, "{action}");
        }
        assert_eq!(task_row(db, id).await.state, TaskState::Pending);

        // Moved to a day later, from the form.
        let field = wait_for(&client, "input#not_before").await;
        field.clear().await.unwrap();
        field.send_keys("2030-01-02T09:00:00Z").await.unwrap();
        wait_for(&client, "#reschedule-button")
            .await
            .click()
            .await
            .unwrap();
        let moved_to = chrono::DateTime::parse_from_rfc3339("2030-01-02T09:00:00Z").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while task_row(db, id).await.not_before != moved_to {
            assert!(std::time::Instant::now() < deadline, "not moved");
            actix_rt::time::sleep(std::time::Duration::from_millis(20)).await;
        }

        open(&client, remit, &page, "#cancel-button").await;
        wait_for(&client, "#cancel-button")
            .await
            .click()
            .await
            .unwrap();
        wait_for_state(
            db,
            &[id],
            TaskState::Cancelled,
            std::time::Duration::from_secs(10),
        )
        .await;
        open(&client, remit, &page, r#"dd[data-field="state"]"#).await;
        assert_eq!(pages::path(&client).await, page);
        assert_eq!(
            text(&client, r#"dd[data-field="state"]"#).await,
            "cancelled"
        );
        assert!(text(&client, r#"dd[data-field="cancelled"]"#)
            .await
            .ends_with("by bootstrap"));
        assert_eq!(count(&client, "#cancel-button").await, 0, "ended");
        assert_eq!(
            count(&client, "#reschedule-button").await,
            1,
            "a cancelled task can be moved back"
        );
    })
    .await;
    assert_eq!(task_row(db, id).await.state, TaskState::Cancelled);
}
