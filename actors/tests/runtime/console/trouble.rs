//! The overview names, for the person on call, the destinations that
//! need attention: disabled (with why), paused, failing (with the last
//! error and its time) and late, with counts; and says so when none does.

use chrono::Utc;
use remit::domain::{AttemptRecord, Region};
use remit::store::{Destinations, Leases};

use super::browser::Browser;
use super::console;
use crate::support::{self, Backend, TestDb, API_TOKEN};

#[actix_rt::test]
async fn the_overview_names_the_destinations_in_trouble() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        let quiet = db.destination("quiet", Region::EU).await;
        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
        let page = browser.get("/console/overview").await;
        assert!(page.body.contains(r#"data-trouble="none""#), "{backend:?}");

        let crm = db.destination("crm", Region::EU).await;
        let billing = db.destination("billing", Region::EU).await;
        db.store
            .disable_destination(&crm, Some("receiver retired".into()))
            .await
            .unwrap();
        db.store
            .pause_destination(&billing, chrono::Duration::minutes(10))
            .await
            .unwrap();
        let page = browser.get("/console/overview").await;
        assert_eq!(page.status, 200, "{backend:?}: {}", page.body);
        assert!(
            page.body
                .contains(r#"data-trouble="disabled" data-destination="crm""#),
            "{backend:?}: {}",
            page.body
        );
        assert!(
            page.body.contains("disabled: receiver retired"),
            "{backend:?}"
        );
        assert!(
            page.body
                .contains(r#"data-trouble="paused" data-destination="billing""#),
            "{backend:?}"
        );
        assert!(
            page.body
                .contains(r#"data-trouble-count="disabled">1 disabled"#),
            "{backend:?}"
        );
        assert!(
            !page
                .body
                .contains(&format!(r#"data-destination="{quiet}""#)),
            "{backend:?}: a healthy destination is not named"
        );
        console.stop().await;
    }
}

/// A reminder waiting longer after its deadline than the runtime's
/// `events.late_after_seconds` names its destination late; a failure names
/// its destination failing, with the error and when it happened; the
/// destinations page shows the retry waiting and each oldest wait. Once a
/// success comes, the failing destination is healthy and its error gone.
#[actix_rt::test]
async fn the_overview_names_late_and_failing_destinations() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        let late = db.destination("late", Region::EU).await;
        let flaky = db.destination("flaky", Region::EU).await;
        let an_hour_ago = Utc::now() - chrono::Duration::hours(1);
        support::task_at(&db, "overdue", &late, Region::EU, an_hour_ago).await;
        support::task(&db, "first", &flaky, Region::EU).await;
        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), API_TOKEN).await;

        let claimed = db
            .store
            .claim_due(&support::claim(Region::EU, "eu-1", 10))
            .await
            .unwrap();
        let flaky_task = claimed
            .iter()
            .find(|c| c.task.destination_id == flaky)
            .unwrap();
        let failed = AttemptRecord {
            http_status: Some(500),
            ..AttemptRecord::default()
        };
        // Due again at once, so that the test need not wait for it.
        db.store
            .finish(
                &flaky_task.lease(),
                &flaky,
                &support::retry_at(db.store.clock(), Utc::now(), failed),
            )
            .await
            .unwrap();

        let page = browser.get("/console/overview").await;
        assert_eq!(page.status, 200, "{backend:?}: {}", page.body);
        assert!(
            page.body
                .contains(r#"data-trouble="late" data-destination="late""#),
            "{backend:?}: {}",
            page.body
        );
        assert!(
            page.body.contains(r#"data-trouble-count="late">1 late"#),
            "{backend:?}"
        );
        let failing = row_of(
            &page.body,
            r#"data-trouble="failing" data-destination="flaky""#,
        );
        assert!(failing.contains("status 500"), "{backend:?}: {failing}");
        // The task waiting for its retry is counted where the overview
        // shows the failing destination, not hidden under "0 waiting".
        assert!(
            failing.contains(r#"<td class="number" data-field="retrying">1</td>"#),
            "{backend:?}: {failing}"
        );
        assert!(
            failing.contains("<time datetime="),
            "{backend:?}: the error's time: {failing}"
        );

        let table = browser.get("/console/destinations").await;
        let flaky_row = row_of(&table.body, r#"data-destination="flaky""#);
        assert!(
            flaky_row.contains(r#"<td class="number" data-field="retrying">1</td>"#),
            "{backend:?}: {flaky_row}"
        );
        let late_row = row_of(&table.body, r#"data-destination="late""#);
        assert!(
            late_row.contains(r#"data-field="oldest_wait"><time"#),
            "{backend:?}: {late_row}"
        );
        assert!(
            late_row.contains(">1h0"),
            "{backend:?}: an hour's wait: {late_row}"
        );

        // The retry delivers: recovered, the error gone.
        let again = db
            .store
            .claim_due(&support::claim(Region::EU, "eu-1", 10))
            .await
            .unwrap();
        let again = again
            .iter()
            .find(|c| c.task.destination_id == flaky)
            .unwrap();
        let ok = AttemptRecord {
            http_status: Some(204),
            ..AttemptRecord::default()
        };
        db.store
            .finish(&again.lease(), &flaky, &support::delivered(ok))
            .await
            .unwrap();
        let page = browser.get("/console/overview").await;
        assert!(
            !page.body.contains(r#"data-destination="flaky""#),
            "{backend:?}: recovered, not named: {}",
            page.body
        );
        let table = browser.get("/console/destinations").await;
        let flaky_row = row_of(&table.body, r#"data-destination="flaky""#);
        assert!(
            flaky_row.contains(r#"<td data-field="last_error">—</td>"#),
            "{backend:?}: {flaky_row}"
        );
        console.stop().await;
    }
}

/// The table row that carries `marker`.
fn row_of<'a>(body: &'a str, marker: &str) -> &'a str {
    let at = body
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker} in {body}"));
    let end = body[at..].find("</tr>").map_or(body.len(), |e| at + e);
    &body[at..end]
}
