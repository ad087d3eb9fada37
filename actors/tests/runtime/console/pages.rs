//! What the pages show: the overview's counts are `remit status`'s, a
//! task's page shows its envelope and never its payload, a rotation shows
//! the new secret once. On both stores.

use remit::domain::Region;
use remit::store::{Destinations, Leases, Reports, Schedule};

use super::browser::{Answer, Browser};
use super::{console, task};
use crate::support::{Backend, TestDb, API_TOKEN};

/// The text of the element carrying `attribute`.
fn text_of(answer: &Answer, attribute: &str) -> String {
    let at = answer
        .body
        .find(attribute)
        .unwrap_or_else(|| panic!("no {attribute} on the page:\n{}", answer.body));
    let start = answer.body[at..].find('>').unwrap() + at + 1;
    let end = answer.body[start..].find('<').unwrap() + start;
    answer.body[start..end].to_owned()
}

#[actix_rt::test]
async fn the_overview_counts_are_those_of_remit_status() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        let crm = db.destination("crm", Region::EU).await;
        for i in 0..5 {
            db.task(&format!("r-{i}"), &crm, Region::EU).await;
        }
        // Two leased, three pending; another region's tasks are not counted.
        db.claim(Region::EU, "eu-1", 2).await;
        let us = db.destination("us-crm", Region::US).await;
        db.task("r-us", &us, Region::US).await;

        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
        let page = browser.get("/console/overview").await;
        assert_eq!(page.status, 200, "{backend:?}: {}", page.body);
        let report = db.store.status(Some(Region::EU)).await.unwrap();
        let eu = report
            .regions
            .iter()
            .find(|r| r.region == Some(Region::EU))
            .unwrap();
        for (name, expected) in [
            ("pending", eu.pending),
            ("leased", eu.leased),
            ("retry_wait", eu.retry_wait),
            ("delivered", eu.delivered),
            ("failed", eu.failed),
            ("cancelled", eu.cancelled),
            ("expired_leases", eu.expired_leases),
        ] {
            let shown = text_of(&page, &format!(r#"data-count="{name}""#));
            assert_eq!(shown, expected.to_string(), "{backend:?} {name}");
        }
        assert_eq!((eu.pending, eu.leased), (3, 2), "{backend:?}");
        // Read a moment after the page was: a second may have ticked over.
        let oldest = eu.oldest_eligible.map_or(0, |d| d.num_seconds());
        let shown: i64 = {
            let marker = r#"data-oldest-eligible-seconds=""#;
            let at = page.body.find(marker).expect("the oldest eligible") + marker.len();
            let end = page.body[at..].find('"').unwrap() + at;
            page.body[at..end].parse().unwrap()
        };
        assert!(
            shown == oldest || shown + 1 == oldest,
            "{backend:?}: the page shows {shown} s, the report {oldest} s"
        );
        for chart in ["deliveries", "rate_limited", "failures", "latency"] {
            assert!(
                page.body
                    .contains(&format!(r#"<svg class="chart" data-chart="{chart}""#)),
                "{backend:?} {chart}"
            );
        }
        assert!(page.body.contains("data-refresh"), "{backend:?}");
        console.stop().await;
    }
}

#[actix_rt::test]
async fn no_page_shows_a_payload() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        let crm = db.destination("crm", Region::EU).await;
        let marker = format!("dob-{}", uuid::Uuid::new_v4().simple());
        let id = task(&db, "clinic-1", "r-1", &crm, Region::EU, &marker).await;
        let stored = db.store.task(id).await.unwrap().unwrap();
        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
        let task_page = format!("/console/tasks/{}", id.0);
        for path in [
            "/console/overview".to_owned(),
            "/console/destinations".to_owned(),
            "/console/tasks".to_owned(),
            format!("/console/tasks?id={}", id.0),
            "/console/tasks?tenant=clinic-1&reminder=r-1&destination=crm&state=pending".to_owned(),
            task_page.clone(),
        ] {
            let page = browser.get(&path).await;
            assert_eq!(page.status, 200, "{backend:?} {path}: {}", page.body);
            assert!(
                !page.body.contains(&marker),
                "{backend:?} {path} shows the payload"
            );
        }
        let page = browser.get(&task_page).await;
        assert_eq!(text_of(&page, r#"data-field="state""#), "pending");
        assert!(
            page.body.contains(&stored.idempotency_key),
            "{backend:?}: the task's key"
        );
        assert!(page.body.contains(r#"<table id="attempts">"#));
        // A pending task cannot be replayed: no button.
        assert!(!page.body.contains("replay-button"), "{backend:?}");
        assert!(
            page.body.contains(r#"data-field="available_at"><time"#),
            "{backend:?}: a waiting task's next attempt"
        );

        // The search narrows by each field.
        for (query, listed) in [
            ("state=pending", true),
            ("state=failed", false),
            ("tenant=clinic-2", false),
            ("destination=crm", true),
            ("tenant=clinic-1&reminder=r-2", false),
            ("tenant=clinic-1&reminder=r-1", true),
            ("from=2000-01-01T00:00", true),
            ("until=2000-01-01T00:00:00Z", false),
        ] {
            let page = browser.get(&format!("/console/tasks?{query}")).await;
            assert_eq!(page.status, 200, "{backend:?} {query}");
            let found = page.body.contains(&format!(r#"data-task-id="{}""#, id.0));
            assert_eq!(found, listed, "{backend:?} {query}");
        }
        let alone = browser.get("/console/tasks?reminder=r-1").await;
        assert_eq!(alone.status, 400);
        assert!(alone.body.contains("reminder:"), "{}", alone.body);
        let bad = browser.get("/console/tasks?from=yesterday").await;
        assert_eq!(bad.status, 400);
        assert!(bad.body.contains("from:"), "{}", bad.body);

        // An ended task has no next attempt.
        remit::store::Changes::cancel(&db.store, id, "cli")
            .await
            .unwrap();
        let page = browser.get(&task_page).await;
        assert_eq!(
            text_of(&page, r#"data-field="available_at""#),
            "none: it has ended",
            "{backend:?}"
        );
        console.stop().await;
    }
}

#[actix_rt::test]
async fn a_rotation_shows_the_new_secret_once() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let crm = db.destination("crm", Region::EU).await;
    let console = console(&db, Region::EU).await;
    let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
    let csrf = browser.get("/console/destinations").await.csrf();
    let answer = browser
        .post(
            "/console/destinations/rotate",
            &[("destination", "crm"), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let secret = text_of(&answer, r#"id="new-secret""#);
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert_eq!(db.store.signing_secrets(&crm).await.unwrap().len(), 1);
    let page = browser.get("/console/destinations").await;
    assert!(!page.body.contains(&secret));
    let unknown = browser
        .post(
            "/console/destinations/rotate",
            &[("destination", "nope"), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(unknown.status, 404);
    console.stop().await;
}

#[actix_rt::test]
async fn what_producers_and_operators_wrote_is_shown_as_text() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let crm = db.destination("crm", Region::EU).await;
    let tenant = r#"<img src=x onerror="alert(1)">"#;
    let id = task(&db, tenant, "<b>r</b>", &crm, Region::EU, "x").await;
    db.store
        .disable_destination(&crm, Some("<script>alert(2)</script>".into()))
        .await
        .unwrap();
    let console = console(&db, Region::EU).await;
    let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
    for path in [
        "/console/destinations".to_owned(),
        "/console/tasks".to_owned(),
        format!("/console/tasks/{}", id.0),
    ] {
        let page = browser.get(&path).await;
        assert_eq!(page.status, 200, "{path}");
        for raw in ["<img src=x", "<script>alert", "<b>r</b>"] {
            assert!(!page.body.contains(raw), "{path} renders {raw} as markup");
        }
    }
    let page = browser.get(&format!("/console/tasks/{}", id.0)).await;
    assert!(page
        .body
        .contains("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"));
    let page = browser.get("/console/destinations").await;
    assert!(page
        .body
        .contains("disabled: &lt;script&gt;alert(2)&lt;/script&gt;"));
    console.stop().await;
}

/// Claims the region's due tasks and finishes the n-th with the n-th
/// answer: a status, or a transport error kind.
async fn finish_with(db: &TestDb, region: Region, answers: &[Result<u16, &str>]) {
    use remit::domain::AttemptRecord;
    use remit::policy::{Decision, Transition};
    use remit::store::Finish;
    let claimed = db.claim(region, "eu-1", 50).await;
    assert_eq!(claimed.len(), answers.len());
    let now = chrono::Utc::now();
    let batch: Vec<Finish> = claimed
        .iter()
        .zip(answers)
        .map(|(c, answer)| Finish {
            lease: c.lease(),
            destination: c.task.destination_id.clone(),
            decision: Decision {
                transition: match answer {
                    Ok(200..=299) => Transition::Deliver,
                    _ => Transition::RetryWait {
                        available_at: now + chrono::Duration::hours(1),
                    },
                },
                pause_destination_until: None,
                record: AttemptRecord {
                    http_status: answer.ok(),
                    transport_error: answer.err().map(|e| (*e).to_owned()),
                    started_at: Some(now - chrono::Duration::milliseconds(40)),
                    received_at: Some(now),
                    ..AttemptRecord::default()
                },
            },
        })
        .collect();
    db.store.finish_many(&batch).await.unwrap();
}

#[actix_rt::test]
async fn a_destinations_page_plots_its_week() {
    for backend in Backend::ALL {
        let db = TestDb::running_on(backend).await;
        let crm = db.destination("crm", Region::EU).await;
        for i in 0..4 {
            db.task(&format!("r-{i}"), &crm, Region::EU).await;
        }
        finish_with(
            &db,
            Region::EU,
            &[Ok(200), Ok(200), Ok(500), Err("timeout")],
        )
        .await;
        db.destination("us-crm", Region::US).await;

        let console = console(&db, Region::EU).await;
        let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
        let table = browser.get("/console/destinations").await;
        assert!(
            table.body.contains(r#"href="/console/destinations/crm""#),
            "{backend:?}: the table links each destination's page"
        );
        let page = browser.get("/console/destinations/crm").await;
        assert_eq!(page.status, 200, "{backend:?}: {}", page.body);
        for (count, expected) in [
            ("attempts", "4"),
            ("succeeded", "2"),
            ("server_error", "1"),
            ("timeout", "1"),
            ("transport", "0"),
            ("rate_limited", "0"),
        ] {
            let shown = text_of(&page, &format!(r#"data-count="{count}""#));
            assert_eq!(shown, expected, "{backend:?} {count}");
        }
        for chart in ["attempts", "failures_by_class", "send_latency", "lateness"] {
            assert!(
                page.body
                    .contains(&format!(r#"<svg class="chart" data-chart="{chart}""#)),
                "{backend:?} {chart}"
            );
        }
        // Counts are drawn over the whole week; this hour's latency, the
        // only one measured, is a point of its own.
        assert!(page.body.contains(r#"<polyline class="series-attempts""#));
        assert!(page.body.contains(r#"<circle class="series-p99""#));
        for missing in [
            "/console/destinations/us-crm",
            "/console/destinations/nobody",
        ] {
            let answer = browser.get(missing).await;
            assert_eq!(answer.status, 404, "{backend:?} {missing}");
        }
        console.stop().await;
    }
}
