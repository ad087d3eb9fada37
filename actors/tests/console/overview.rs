//! Signing in, the overview's counts against `remit status --format json`,
//! and the destinations page: each state, and a rotation's new secret.

use remit::store::Destinations;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use remit::domain::TaskState;

use crate::driver::{screenshot, wait_for, wait_for_xpath, with_browser};
use crate::pages::{self, assert_no_payload, attr, count, open, text};
use crate::seed::{self, wait_for_state, SECRET};
use crate::server::{status_json, RemitRun, ADMIN_TOKEN};
use crate::support::{Backend, Receiver, Reply, RetryAfter, TestDb};

const COUNTS: [&str; 6] = [
    "pending",
    "leased",
    "retry_wait",
    "delivered",
    "failed",
    "expired_leases",
];
const CHARTS: [&str; 4] = ["deliveries", "rate_limited", "failures", "latency"];

#[actix_rt::test]
async fn overview_counts_equal_remit_status_on_postgres() {
    overview_and_destinations(Backend::Postgres).await;
}

#[actix_rt::test]
async fn overview_counts_equal_remit_status_on_sqlite() {
    overview_and_destinations(Backend::Sqlite).await;
}

/// Three delivered, two failed (410 is not retried), one waiting out a
/// half-hour Retry-After, two due in 2030, and a destination disabled by
/// hand: a region at rest, so the page and `remit status` read the same.
async fn overview_and_destinations(backend: Backend) {
    let db = TestDb::running_on(backend).await;
    let receiver = Receiver::start();
    receiver.script("/ok", vec![], Reply::ok());
    receiver.script("/gone", vec![], Reply::status(410));
    receiver.script(
        "/busy",
        vec![],
        Reply::status(503).retry_after(RetryAfter::Seconds(1800)),
    );
    let crm = seed::destination(&db, "crm", &receiver.url("/ok")).await;
    let ehr = seed::destination(&db, "ehr", &receiver.url("/gone")).await;
    let pharmacy = seed::destination(&db, "pharmacy", &receiver.url("/busy")).await;
    let archive = seed::destination(&db, "archive", &receiver.url("/ok")).await;
    db.store
        .disable_destination(&archive, Some("retired".into()))
        .await
        .unwrap();
    let mut delivered = Vec::new();
    for n in 0..3 {
        delivered.push(seed::task(&db, "clinic-a", &format!("ok-{n}"), &crm).await);
    }
    let mut failed = Vec::new();
    for n in 0..2 {
        failed.push(seed::task(&db, "clinic-b", &format!("gone-{n}"), &ehr).await);
    }
    let waiting = seed::task(&db, "clinic-a", "busy-0", &pharmacy).await;
    let in_2030 = Utc.with_ymd_and_hms(2030, 1, 1, 9, 0, 0).unwrap();
    for n in 0..2 {
        seed::task_at(&db, "clinic-a", &format!("later-{n}"), &crm, in_2030).await;
    }

    let remit = RemitRun::start(&db).await;
    let within = Duration::from_secs(10);
    wait_for_state(&db, &delivered, TaskState::Delivered, within).await;
    wait_for_state(&db, &failed, TaskState::Failed, within).await;
    wait_for_state(&db, &[waiting], TaskState::RetryWait, within).await;

    let status = status_json(&db);
    let expected = [
        ("pending", 2),
        ("retry_wait", 1),
        ("delivered", 3),
        ("failed", 2),
    ];
    for (name, n) in expected {
        assert_eq!(status[name], n, "remit status {name}: {status}");
    }

    let (db, remit) = (&db, &remit);
    with_browser(|client| async move {
        // No session: the console sends the browser to sign in.
        client.goto(&remit.url("/console")).await.unwrap();
        wait_for(&client, "form#sign-in").await;
        assert_eq!(pages::path(&client).await, "/console/sign-in");
        screenshot(&client, "sign-in").await;
        pages::type_token(&client, "not-a-token").await;
        wait_for(&client, "#sign-in-error").await;
        assert_eq!(count(&client, r#"[data-count]"#).await, 0, "no overview");

        pages::sign_in(&client, remit, ADMIN_TOKEN).await;
        let cookies = client.get_all_cookies().await.unwrap();
        let session = cookies
            .iter()
            .find(|c| c.name() == "remit_console")
            .unwrap_or_else(|| panic!("no remit_console cookie in {cookies:?}"));
        assert_eq!(session.http_only(), Some(true), "{session}");
        assert!(session.to_string().contains("SameSite=Strict"), "{session}");
        assert_eq!(session.path(), Some("/console"), "{session}");
        assert_ne!(session.secure(), Some(true), "plain HTTP: {session}");
        let visible = client.execute("return document.cookie", vec![]).await;
        assert!(
            !visible.unwrap().to_string().contains("remit_console"),
            "the session cookie is HttpOnly"
        );

        for name in COUNTS {
            let shown = text(&client, &format!(r#"[data-count="{name}"]"#)).await;
            let shown: i64 = shown
                .parse()
                .unwrap_or_else(|_| panic!("data-count {name} is {shown:?}, not an integer"));
            assert_eq!(Some(shown), status[name].as_i64(), "{name}: {status}");
        }
        let oldest = attr(
            &client,
            "[data-oldest-eligible-seconds]",
            "data-oldest-eligible-seconds",
        )
        .await;
        let expected = status["oldest_eligible_seconds"]
            .as_f64()
            .map_or(0, |s| s as i64);
        assert_eq!(oldest, expected.to_string(), "nothing is eligible");
        for chart in CHARTS {
            let css = format!(r#"svg.chart[data-chart="{chart}"]"#);
            assert_eq!(count(&client, &css).await, 1, "{css}");
        }
        assert_no_payload(&client).await;
        screenshot(&client, "overview").await;
        let styled = client
            .execute(
                "return Array.from(document.styleSheets).some(sheet =>
                   sheet.href && sheet.href.endsWith('/console/assets/console.css')
                   && sheet.cssRules.length > 0)",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            styled, true,
            "the embedded style sheet applies under the CSP"
        );

        // Live refresh: the page's own script (allowed by the CSP) fetches
        // it again and swaps the counts in, without a navigation.
        client
            .execute("window.sameDocument = true", vec![])
            .await
            .unwrap();
        seed::task_at(db, "clinic-a", "later-2", &crm, in_2030).await;
        wait_for_xpath(
            &client,
            r#"//*[@data-count="pending"][normalize-space(.)="3"]"#,
        )
        .await;
        let same = client.execute("return window.sameDocument === true", vec![]);
        assert_eq!(same.await.unwrap(), true, "refreshed in place");

        open(
            &client,
            remit,
            "/console/destinations",
            "table#destinations",
        )
        .await;
        let state = |id: &str| format!(r#"tr[data-destination="{id}"] td[data-field="state"]"#);
        assert_eq!(text(&client, &state("crm")).await, "active");
        assert_eq!(text(&client, &state("ehr")).await, "active");
        let paused = text(&client, &state("pharmacy")).await;
        assert!(paused.starts_with("paused until"), "{paused}");
        assert_eq!(text(&client, &state("archive")).await, "disabled: retired");
        let failed_cell = r#"tr[data-destination="ehr"] td[data-field="failed"]"#;
        assert_eq!(text(&client, failed_cell).await, "2");
        for field in ["rate", "in_flight", "backlog", "last_error", "rate_limited"] {
            let css = format!(r#"tr[data-destination="crm"] td[data-field="{field}"]"#);
            assert_eq!(count(&client, &css).await, 1, "{css}");
        }
        assert_no_payload(&client).await;
        screenshot(&client, "destinations").await;

        // Rotate crm's signing secret: the new one is shown once, and the
        // store now holds two.
        let rotate = r#"tr[data-destination="crm"] form[data-action="rotate"] button"#;
        wait_for(&client, rotate).await.click().await.unwrap();
        crate::pages::confirm(&client).await;
        let secret = text(&client, "code#new-secret").await;
        assert!(secret.starts_with("whsec_") && secret != SECRET, "{secret}");
        let secrets = db.store.signing_secrets(&crm).await.unwrap();
        assert_eq!(secrets.len(), 2, "{secrets:?}");
        open(
            &client,
            remit,
            "/console/destinations",
            "table#destinations",
        )
        .await;
        let source = client.source().await.unwrap();
        assert!(!source.contains(&secret), "the new secret is shown once");
    })
    .await;
    drop(receiver);
}
