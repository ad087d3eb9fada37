//! What every scenario does with a console page: sign in, read the
//! contract's ids and data attributes, and post as a forger would.

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::elements::Element;
use fantoccini::key::Key;
use fantoccini::{Client, Locator};

use crate::driver::wait_for;
use crate::seed::PAYLOAD_MARKER;
use crate::server::RemitRun;

/// Signs in with `token` through the sign-in form and waits for the
/// overview.
pub async fn sign_in(client: &Client, remit: &RemitRun, token: &str) {
    client.goto(&remit.url("/console")).await.unwrap();
    type_token(client, token).await;
    wait_for(client, r#"[data-count="pending"]"#).await;
    assert_eq!(path(client).await, "/console/overview");
}

/// Types `token` into the sign-in form and sends it with the keyboard.
pub async fn type_token(client: &Client, token: &str) {
    let field = wait_for(client, "form#sign-in input#token").await;
    field.clear().await.unwrap();
    field.send_keys(token).await.unwrap();
    wait_for(client, "#sign-in-button")
        .await
        .click()
        .await
        .unwrap();
}

/// Opens `path` of the console and waits for `css` on it.
pub async fn open(client: &Client, remit: &RemitRun, path: &str, css: &str) -> Element {
    client.goto(&remit.url(path)).await.unwrap();
    wait_for(client, css).await
}

pub async fn path(client: &Client) -> String {
    client.current_url().await.unwrap().path().to_owned()
}

/// The trimmed text of the one element `css` selects.
pub async fn text(client: &Client, css: &str) -> String {
    wait_for(client, css)
        .await
        .text()
        .await
        .unwrap()
        .trim()
        .to_owned()
}

pub async fn count(client: &Client, css: &str) -> usize {
    client.find_all(Locator::Css(css)).await.unwrap().len()
}

/// An attribute of the one element `css` selects.
pub async fn attr(client: &Client, css: &str, name: &str) -> String {
    wait_for(client, css)
        .await
        .attr(name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("`{css}` has no {name} attribute"))
}

/// Fails if the page shows any payload text.
pub async fn assert_no_payload(client: &Client) {
    let source = client.source().await.unwrap();
    assert!(
        !source.contains(PAYLOAD_MARKER),
        "{} shows a payload",
        path(client).await
    );
}

/// The session's CSRF value, as the page's forms carry it (the sign-out
/// form is on every signed-in page).
pub async fn csrf(client: &Client) -> String {
    attr(client, r#"input[type="hidden"][name="csrf"]"#, "value").await
}

/// POSTs `fields` (form-encoded) to `path` from inside the page, with the
/// page's cookie, as a script or a forged form would: the status.
pub async fn forged_post(client: &Client, path: &str, fields: &[(&str, &str)]) -> u16 {
    let fields: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), serde_json::Value::from(*v)))
        .collect();
    let status = client
        .execute(
            "const [path, fields] = arguments;
             return fetch(path, {
               method: 'POST',
               body: new URLSearchParams(fields),
               credentials: 'same-origin',
               redirect: 'manual',
             }).then(response => response.status);",
            vec![path.into(), fields.into()],
        )
        .await
        .unwrap();
    status
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or_else(|| panic!("fetch answered {status}"))
}

/// Waits for the confirmation dialog an action asks in (`data-confirm`)
/// and answers it: its question.
async fn answer_dialog(client: &Client, yes: bool) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let question = loop {
        match client.get_alert_text().await {
            Ok(question) => break question,
            Err(_) => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no confirmation asked"
                );
                actix_rt::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    };
    if yes {
        client.accept_alert().await.unwrap();
    } else {
        client.dismiss_alert().await.unwrap();
    }
    question
}

/// Says yes to the confirmation an action asks: its question.
pub async fn confirm(client: &Client) -> String {
    answer_dialog(client, true).await
}

/// Says no to it: its question.
pub async fn decline(client: &Client) -> String {
    answer_dialog(client, false).await
}

/// The action forms (`form[data-action]`) on the page, by their action.
pub async fn action_forms(client: &Client) -> Vec<String> {
    let mut actions = Vec::new();
    for form in client
        .find_all(Locator::Css("form[data-action]"))
        .await
        .unwrap()
    {
        let action = form.attr("data-action").await.unwrap().unwrap_or_default();
        actions.push(action);
    }
    actions
}

/// Presses and releases `key` wherever the keyboard focus is, as a person
/// at the keyboard would.
pub async fn press(client: &Client, key: Key) {
    let key = char::from(key);
    let actions = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key })
        .then(KeyAction::Up { value: key });
    client.perform_actions(actions).await.unwrap();
}

/// The `id` of the element with the keyboard focus, if it has one.
pub async fn focused_id(client: &Client) -> Option<String> {
    let focused = client.active_element().await.unwrap();
    focused
        .attr("id")
        .await
        .unwrap()
        .filter(|id| !id.is_empty())
}
