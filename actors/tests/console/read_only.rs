//! A `read` token: every page without an action, and its POSTs refused
//! with 403 even with the session's own CSRF value, changing nothing.

use std::time::Duration;

use remit::domain::TaskState;
use remit::store::Jobs;

use crate::driver::with_browser;
use crate::pages::{self, action_forms, assert_no_payload, count, csrf, forged_post, open};
use crate::seed::{self, task_row, wait_for_state};
use crate::server::{create_token, RemitRun, REGION};
use crate::support::{Backend, Receiver, Reply, TestDb};

#[actix_rt::test]
async fn a_read_token_sees_no_action_and_its_posts_are_refused_on_postgres() {
    read_only(Backend::Postgres).await;
}

#[actix_rt::test]
async fn a_read_token_sees_no_action_and_its_posts_are_refused_on_sqlite() {
    read_only(Backend::Sqlite).await;
}

async fn read_only(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![], Reply::status(410));
    let crm = seed::destination(&db, "crm", &receiver.url("/hook")).await;
    let id = seed::task(&db, "clinic-a", "renewal-1", &crm).await;
    let token = create_token(&db, "read", "on-call-viewer");
    let remit = RemitRun::start(&db).await;
    wait_for_state(&db, &[id], TaskState::Failed, Duration::from_secs(10)).await;
    receiver.script("/hook", vec![], Reply::ok());

    let (db, remit) = (&db, &remit);
    with_browser(|client| async move {
        pages::sign_in(&client, remit, &token).await;
        let task_page = format!("/console/tasks/{}", id.0);
        let visits = [
            ("/console/overview", r#"[data-count="failed"]"#),
            ("/console/destinations", r#"tr[data-destination="crm"]"#),
            (
                "/console/tasks?tenant=clinic-a",
                "table#tasks tr[data-task-id]",
            ),
            (task_page.as_str(), r#"dd[data-field="state"]"#),
        ];
        for (path, shown) in visits {
            open(&client, remit, path, shown).await;
            assert_eq!(action_forms(&client).await, Vec::<String>::new(), "{path}");
            for button in ["#bulk-replay", "#bulk-cancel", "#replay-button"] {
                assert_eq!(count(&client, button).await, 0, "{button} on {path}");
            }
            assert_no_payload(&client).await;
        }

        // Forged with the session's own CSRF value (the sign-out form's),
        // so only the scope can refuse them.
        let csrf = csrf(&client).await;
        let replay = format!("{task_page}/replay");
        let one = forged_post(&client, &replay, &[("csrf", &csrf)]).await;
        assert_eq!(one, 403, "POST {replay}");
        let bulk = [("csrf", csrf.as_str()), ("tenant", "clinic-a")];
        let many = forged_post(&client, "/console/replays", &bulk).await;
        assert_eq!(many, 403, "POST /console/replays");
        let cancels = forged_post(&client, "/console/cancels", &bulk).await;
        assert_eq!(cancels, 403, "POST /console/cancels");
    })
    .await;

    let row = task_row(db, id).await;
    assert_eq!((row.state, row.attempt_count), (TaskState::Failed, 1));
    let jobs = db.store.jobs(REGION, false, 10).await.unwrap();
    assert!(jobs.is_empty(), "no bulk job was recorded: {jobs:?}");
    assert_eq!(receiver.requests_to("/hook").len(), 1);
}
