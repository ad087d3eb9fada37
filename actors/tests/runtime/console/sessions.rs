//! Signing in and out, the session cookie's attributes, CSRF, and the
//! headers every answer carries.

use remit::domain::Region;
use remit::store::{ApiTokens, Destinations};

use super::browser::{Answer, Browser};
use super::{console, console_with, token};
use crate::support::{Backend, TestDb, API_TOKEN};

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'";

fn assert_secure_headers(path: &str, answer: &Answer) {
    assert_eq!(answer.header("content-security-policy"), CSP, "{path}");
    assert_eq!(answer.header("x-content-type-options"), "nosniff", "{path}");
    assert_eq!(answer.header("referrer-policy"), "no-referrer", "{path}");
    assert!(!answer.header("cache-control").is_empty(), "{path}");
    // The CSP forbids inline script and style: the pages use neither.
    assert!(!answer.body.contains("<script>"), "{path}");
    assert!(!answer.body.contains(" style="), "{path}");
    assert!(!answer.body.contains("<style"), "{path}");
}

#[actix_rt::test]
async fn sign_in_sets_a_strict_http_only_cookie_and_a_bad_token_is_401() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let console = console(&db, Region::EU).await;
    let mut browser = Browser::new(console.addr());

    // Without a session every page sends to the sign-in form.
    for path in [
        "/console",
        "/console/overview",
        "/console/destinations",
        "/console/tasks",
    ] {
        let answer = browser.get(path).await;
        assert_eq!(answer.status, 303, "{path}");
        assert_eq!(answer.header("location"), "/console/sign-in", "{path}");
        assert_secure_headers(path, &answer);
    }
    let form = browser.get("/console/sign-in").await;
    assert_eq!(form.status, 200);
    assert!(form
        .body
        .contains(r#"<form id="sign-in" method="post" action="/console/sign-in">"#));
    assert!(form
        .body
        .contains(r#"id="token" name="token" type="password""#));
    assert!(form
        .body
        .contains(r#"<button id="sign-in-button" type="submit">"#));
    assert_secure_headers("/console/sign-in", &form);

    for wrong in ["wrong", "remit_notatoken", ""] {
        let refused = browser.sign_in(wrong).await;
        assert_eq!(refused.status, 401, "{wrong:?}");
        assert!(refused.body.contains(r#"id="sign-in-error""#), "{wrong:?}");
        assert!(refused.headers.get("set-cookie").is_none(), "{wrong:?}");
    }
    assert!(browser.cookie.is_none());

    // A sign-in posted from another site is refused: no page elsewhere may
    // sign a person in with a token of its own.
    let form = [("token", API_TOKEN)];
    for headers in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("sec-fetch-site", "same-site")][..],
        &[("origin", "http://elsewhere.example")][..],
        &[("origin", "null")][..],
    ] {
        let refused = browser.post_with("/console/sign-in", &form, headers).await;
        assert_eq!(refused.status, 403, "{headers:?}");
        assert!(refused.headers.get("set-cookie").is_none(), "{headers:?}");
    }
    let own_origin = format!("http://{}", console.addr());
    let same_origin = browser
        .post_with(
            "/console/sign-in",
            &form,
            &[("sec-fetch-site", "same-origin")],
        )
        .await;
    assert_eq!(same_origin.status, 303);
    let from_its_page = browser
        .post_with(
            "/console/sign-in",
            &form,
            &[("origin", own_origin.as_str())],
        )
        .await;
    assert_eq!(from_its_page.status, 303);

    let signed_in = browser.sign_in(API_TOKEN).await;
    assert_eq!(signed_in.status, 303);
    assert_eq!(signed_in.header("location"), "/console/overview");
    let cookie = signed_in.header("set-cookie").to_owned();
    assert!(cookie.starts_with("remit_console="), "{cookie}");
    for attribute in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/console",
        "Max-Age=3600",
    ] {
        assert!(cookie.contains(attribute), "{attribute} missing: {cookie}");
    }
    // Plain http: not Secure (the browser would drop it).
    assert!(!cookie.contains("Secure"), "{cookie}");
    // Sealed: neither the token nor anything readable is in it.
    assert!(!cookie.contains(API_TOKEN), "{cookie}");
    assert!(!cookie.contains("csrf"), "{cookie}");

    // A forwarded scheme is not the connection's: anyone can send one.
    let forwarded = awc::Client::builder()
        .disable_redirects()
        .finish()
        .post(format!("http://{}/console/sign-in", console.addr()))
        .insert_header(("x-forwarded-proto", "https"))
        .send_form(&[("token", API_TOKEN)])
        .await
        .unwrap();
    let forwarded = forwarded
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(!forwarded.contains("Secure"), "{forwarded}");
    assert_eq!(
        browser.get("/console").await.header("location"),
        "/console/overview"
    );
    for path in [
        "/console/overview",
        "/console/destinations",
        "/console/tasks",
        "/console/assets/console.css",
        "/console/assets/console.js",
    ] {
        let answer = browser.get(path).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        assert_secure_headers(path, &answer);
    }
    let page = browser.get("/console/overview").await;
    assert_eq!(page.header("cache-control"), "no-store");
    assert!(page.body.contains(r#"<meta name="viewport""#));
    assert!(page.body.contains(r##"href="#main""##), "a skip link");

    // A forged cookie is no session.
    let mut forged = Browser::new(console.addr());
    forged.cookie = Some("remit_console=eyJ0b2tlbiI6IngifQ".into());
    assert_eq!(forged.get("/console/overview").await.status, 303);

    // Signing out clears the cookie.
    let csrf = page.csrf();
    let out = browser.post("/console/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, 303);
    let cleared = out.header("set-cookie");
    assert!(cleared.starts_with("remit_console=;"), "{cleared}");
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    console.stop().await;
}

#[actix_rt::test]
async fn behind_a_tls_proxy_the_session_cookie_is_secure() {
    let db = TestDb::running_on(Backend::Postgres).await;
    // Plain http and no setting: the browser would drop a Secure cookie.
    let plain = console(&db, Region::EU).await;
    let mut browser = Browser::new(plain.addr());
    let cookie = browser
        .sign_in(API_TOKEN)
        .await
        .header("set-cookie")
        .to_owned();
    assert!(cookie.starts_with("remit_console="), "{cookie}");
    assert!(!cookie.contains("Secure"), "{cookie}");
    plain.stop().await;

    // Still plain http to remit, but the proxy in front speaks TLS.
    let proxied = console_with(&db, Region::EU, |config| {
        config.console.secure_cookie = true;
    })
    .await;
    let mut browser = Browser::new(proxied.addr());
    let signed_in = browser.sign_in(API_TOKEN).await;
    assert_eq!(signed_in.status, 303);
    let cookie = signed_in.header("set-cookie").to_owned();
    assert!(cookie.starts_with("remit_console="), "{cookie}");
    for attribute in ["Secure", "HttpOnly", "SameSite=Strict", "Path=/console"] {
        assert!(cookie.contains(attribute), "{attribute} missing: {cookie}");
    }
    // The cookie that ends the session has the same attributes, or the
    // browser would keep the Secure one.
    let csrf = browser.get("/console/overview").await.csrf();
    let out = browser.post("/console/sign-out", &[("csrf", &csrf)]).await;
    let cleared = out.header("set-cookie");
    assert!(cleared.starts_with("remit_console=;"), "{cleared}");
    assert!(cleared.contains("Secure"), "{cleared}");
    proxied.stop().await;
}

#[actix_rt::test]
async fn a_post_without_the_session_csrf_value_is_refused() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let crm = db.destination("crm", Region::EU).await;
    let console = console(&db, Region::EU).await;
    let browser = Browser::signed_in(console.addr(), API_TOKEN).await;
    let page = browser.get("/console/destinations").await;
    assert!(
        page.body.contains(r#"data-action="disable""#),
        "{}",
        page.body
    );
    let csrf = page.csrf();

    let disable = "/console/destinations/disable";
    let missing = browser.post(disable, &[("destination", "crm")]).await;
    assert_eq!(missing.status, 403, "{}", missing.body);
    let wrong = browser
        .post(
            disable,
            &[("destination", "crm"), ("csrf", "not-the-value")],
        )
        .await;
    assert_eq!(wrong.status, 403);
    // Another session's value is as wrong.
    let other = Browser::signed_in(console.addr(), API_TOKEN).await;
    let theirs = other.get("/console/destinations").await.csrf();
    assert_ne!(theirs, csrf);
    let crossed = browser
        .post(disable, &[("destination", "crm"), ("csrf", &theirs)])
        .await;
    assert_eq!(crossed.status, 403);
    assert!(db.store.destination(&crm).await.unwrap().unwrap().enabled);

    let done = browser
        .post(
            disable,
            &[
                ("destination", "crm"),
                ("csrf", &csrf),
                ("reason", "migrating"),
            ],
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    let stored = db.store.destination(&crm).await.unwrap().unwrap();
    assert!(!stored.enabled);
    assert_eq!(stored.health.disabled_reason.as_deref(), Some("migrating"));
    let page = browser.get("/console/destinations").await;
    assert!(
        page.body
            .contains(r#"<td data-field="state">disabled: migrating</td>"#),
        "{}",
        page.body
    );

    // Without a session, a POST is sent to sign in and changes nothing.
    let stranger = Browser::new(console.addr());
    let refused = stranger
        .post(
            "/console/destinations/enable",
            &[("destination", "crm"), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(refused.status, 303);
    assert!(!db.store.destination(&crm).await.unwrap().unwrap().enabled);
    console.stop().await;
}

#[actix_rt::test]
async fn a_revoked_token_s_session_ends_at_once() {
    let db = TestDb::running_on(Backend::Postgres).await;
    let console = console(&db, Region::EU).await;
    let (stored, secret) = token(&db, "read", &[]).await;
    let browser = Browser::signed_in(console.addr(), &secret).await;
    assert_eq!(browser.get("/console/overview").await.status, 200);
    db.store.revoke_api_token(&stored.id).await.unwrap();
    let after = browser.get("/console/overview").await;
    assert_eq!(after.status, 303);
    assert_eq!(after.header("location"), "/console/sign-in");
    assert_eq!(
        Browser::new(console.addr()).sign_in(&secret).await.status,
        401
    );
    console.stop().await;
}

#[actix_rt::test]
async fn a_session_ends_when_its_time_is_up_whatever_the_browser_keeps() {
    use actix_web::{App, HttpServer};
    use remit_actors::console::{self, ConsoleState};

    let db = TestDb::running_on(Backend::Postgres).await;
    let config = crate::support::config(&db, Region::EU, "console-1");
    let mut state = ConsoleState::new(
        &config,
        Region::EU,
        db.store.clone(),
        None,
        crate::support::logger(),
    );
    state.session = chrono::Duration::seconds(1);
    let server = HttpServer::new(move || App::new().configure(console::routes(state.clone())))
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);

    let started = std::time::Instant::now();
    let mut browser = Browser::new(addr);
    let signed_in = browser.sign_in(API_TOKEN).await;
    assert!(signed_in.header("set-cookie").contains("Max-Age=1"));
    // The browser keeps sending the cookie; the server refuses it once the
    // sealed expiry has passed.
    loop {
        let status = browser.get("/console/overview").await.status;
        if status == 303 {
            break;
        }
        assert_eq!(status, 200);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "the session outlived its second"
        );
        actix_rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(started.elapsed() >= std::time::Duration::from_millis(900));
    handle.stop(true).await;
}
