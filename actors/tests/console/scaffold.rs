//! The browser harness on its own: a form served by actix-web, filled in
//! and submitted by Chromium, and a screenshot written.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::driver::{screenshot, wait_for, with_browser};
use crate::support::receiver::serve;

#[derive(Deserialize)]
struct Greeting {
    name: String,
}

async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(
            r#"<!doctype html><title>form</title>
<form id="greet" method="post" action="/greet">
<input id="name" name="name"><button id="go" type="submit">Go</button></form>"#,
        )
}

async fn greet(form: web::Form<Greeting>) -> HttpResponse {
    let name: String = form
        .name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(format!(r#"<!doctype html><p id="hello">Hello {name}</p>"#))
}

#[actix_rt::test]
async fn the_harness_submits_a_form_and_writes_a_screenshot() {
    let (addr, server) = serve(|app| {
        app.route("/", web::get().to(page))
            .route("/greet", web::post().to(greet));
    });
    with_browser(|client| async move {
        client.goto(&format!("http://{addr}/")).await.unwrap();
        wait_for(&client, "#name")
            .await
            .send_keys("ward7")
            .await
            .unwrap();
        wait_for(&client, "#go").await.click().await.unwrap();
        let hello = wait_for(&client, "#hello").await.text().await.unwrap();
        assert_eq!(hello, "Hello ward7");
        let path = screenshot(&client, "harness").await;
        assert!(std::fs::metadata(&path).unwrap().len() > 100, "{path:?}");
    })
    .await;
    drop(server.stop(false));
}
