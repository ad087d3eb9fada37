//! The console on a phone-sized screen and from the keyboard alone: no
//! page scrolls sideways (a wide table scrolls inside its own box), and a
//! failed task can be found and replayed without a pointer.

use std::time::Duration;

use remit::domain::TaskState;

use crate::driver::{screenshot, wait_for, with_browser};
use fantoccini::key::Key;

use crate::pages::{self, focused_id, open, press};
use crate::seed::{self, wait_for_state};
use crate::server::{RemitRun, ADMIN_TOKEN};
use crate::support::{Backend, Receiver, Reply, TestDb};

/// A phone's width in CSS pixels.
const PHONE_WIDTH: u32 = 390;

#[actix_rt::test]
async fn every_page_fits_a_phone_and_works_from_the_keyboard() {
    let db = TestDb::running_on(Backend::Sqlite).await;
    let receiver = Receiver::start();
    receiver.script("/hook", vec![], Reply::status(410));
    let crm = seed::destination(&db, "crm", &receiver.url("/hook")).await;
    let id = seed::task(&db, "clinic-a", "renewal-1", &crm).await;
    let remit = RemitRun::start(&db).await;
    wait_for_state(&db, &[id], TaskState::Failed, Duration::from_secs(10)).await;
    receiver.script("/hook", vec![], Reply::ok());

    let (db, remit) = (&db, &remit);
    with_browser(|client| async move {
        client.set_window_size(PHONE_WIDTH, 844).await.unwrap();
        let width = client.execute("return window.innerWidth", vec![]).await;
        let width = width.unwrap().as_u64().unwrap();
        assert!(
            width <= u64::from(PHONE_WIDTH),
            "a phone-sized viewport: {width}"
        );

        // Signed in from the keyboard: the token field has the focus.
        client.goto(&remit.url("/console")).await.unwrap();
        wait_for(&client, "form#sign-in").await;
        assert_eq!(focused_id(&client).await.as_deref(), Some("token"));
        let focused = client.active_element().await.unwrap();
        focused.send_keys(ADMIN_TOKEN).await.unwrap();
        press(&client, Key::Enter).await;
        wait_for(&client, r#"[data-count="failed"]"#).await;

        let task_page = format!("/console/tasks/{}", id.0);
        let visits = [
            ("/console/overview", r#"[data-count="failed"]"#),
            ("/console/destinations", "table#destinations"),
            ("/console/tasks?tenant=clinic-a", "table#tasks"),
            ("/console/audit", "table#audit"),
            // Last: the keyboard's walk below starts on the task's page.
            (task_page.as_str(), "#replay-button"),
        ];
        for (path, shown) in visits {
            open(&client, remit, path, shown).await;
            let sideways = client
                .execute(
                    "const page = document.documentElement;
                     return page.scrollWidth - page.clientWidth",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(sideways, 0, "{path} scrolls sideways on a phone");
        }
        screenshot(&client, "phone-task").await;

        // Tab to the replay button and press Enter.
        let mut presses = 0;
        while focused_id(&client).await.as_deref() != Some("replay-button") {
            presses += 1;
            assert!(presses <= 40, "no replay button within 40 presses of Tab");
            press(&client, Key::Tab).await;
        }
        press(&client, Key::Enter).await;
        wait_for_state(db, &[id], TaskState::Delivered, Duration::from_secs(10)).await;
        assert_eq!(pages::path(&client).await, task_page);
    })
    .await;
}
