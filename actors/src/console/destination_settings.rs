//! A destination's settings page: its own limits, timeout, retry policy,
//! lateness allowance, disable thresholds and headers, each shown beside
//! the runtime's value it replaces, and (for an admin) changed through the
//! same checks and store call as `PATCH /v1/destinations/{id}`. A field
//! left empty gives the setting back to the runtime. Its URL is changed
//! through the API or `remit destination set`, which check it against the
//! address policy.

use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use remit::domain::{Destination, DestinationId, HeaderValue, SETTING_NAMES};
use remit::store::Destinations;
use serde_json::{json, Map, Value};
use slog::info;

use super::error::ConsoleError;
use super::layout::{see_other, Page, Section};
use super::session;
use super::session::Viewer;
use super::state::ConsoleState;
use crate::api::{read_object, ChangeDestination};

/// The disable thresholds, by the name the API gives them, and how the
/// page labels them; they follow the settings (`DestinationSettings::shown`
/// names and labels those).
const THRESHOLDS: &[(&str, &str)] = &[
    ("disable_after_seconds", "Disable after failing for (s)"),
    ("disable_after_failures", "Disable after failed attempts"),
];

/// `GET /console/destinations/{id}/settings`.
pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.sees_every_tenant()?;
    let d = in_region(&state, &id).await?;
    Ok(Page {
        title: "Destination settings",
        section: Section::Destinations,
        viewer: Some(&viewer),
        refresh: false,
        body: html! {
            h1 { "Settings of " (d.id.as_str()) }
            p.url { (d.url.as_str()) }
            p { "An empty field takes the runtime's value, shown beside it. A change reaches every process of the region within about a second." }
            (form(&state, &viewer, &d))
            p { a href="/console/destinations" { "Back to the destinations" } }
        },
    }
    .render())
}

fn form(state: &ConsoleState, viewer: &Viewer, d: &Destination) -> Markup {
    let current = current_numbers(d);
    let runtime = runtime_numbers(state, &d.id);
    let plain: Vec<String> = d
        .settings
        .headers
        .iter()
        .filter_map(|h| match &h.value {
            HeaderValue::Plain(v) => Some(format!("{}: {v}", h.name)),
            HeaderValue::Secret { .. } => None,
        })
        .collect();
    let disabled = !viewer.admin();
    html! {
        form #settings data-action="settings" method="post"
            action=(format!("/console/destinations/{}/settings", d.id.as_str())) {
            (viewer.csrf_input())
            // The version the form shows: a save against a newer one is
            // refused rather than undoing a change made meanwhile.
            input type="hidden" name="version" value=(d.settings_tag());
            table {
                tbody {
                    @for ((name, label, value), default) in current.iter().zip(&runtime) {
                        tr {
                            th scope="row" { label for=(name) { (label) } }
                            td { input id=(name) name=(name) type="text" inputmode="decimal" value=(value) disabled[disabled]; }
                            td { "runtime: " (default) }
                        }
                    }
                }
            }
            label for="headers" { "Headers, one `Name: value` per line" }
            textarea #headers name="headers" rows="4" disabled[disabled] { (plain.join("\n")) }
            @for h in d.settings.headers.iter().filter(|h| h.value.is_secret()) {
                p {
                    label {
                        input type="checkbox" name="keep_secret" value=(h.name) checked disabled[disabled];
                        " keep secret header " code { (h.name) }
                        @if let HeaderValue::Secret { hint: Some(hint), .. } = &h.value { " (…" (hint) ")" }
                    }
                }
            }
            p {
                label for="secret_name" { "New secret header" }
                input #secret_name name="secret_name" type="text" placeholder="Authorization" disabled[disabled];
                input #secret_value name="secret_value" type="password" autocomplete="off"
                    aria-label="Its value" disabled[disabled];
            }
            @if viewer.admin() {
                button type="submit" { "Save settings" }
            }
        }
    }
}

/// Each number the form shows: its name, its label and the destination's
/// own value (empty: none).
fn current_numbers(d: &Destination) -> Vec<(&'static str, &'static str, String)> {
    let o = &d.health.overrides;
    let settings = d.settings.shown().into_iter();
    let thresholds = THRESHOLDS.iter().zip([
        o.after_seconds.map(|v| v.to_string()),
        o.failures.map(|v| v.to_string()),
    ]);
    settings
        .chain(thresholds.map(|(&(name, label), value)| (name, label, value)))
        .map(|(name, label, value)| (name, label, value.unwrap_or_default()))
        .collect()
}

/// What the runtime would use without them.
fn runtime_numbers(state: &ConsoleState, id: &DestinationId) -> Vec<String> {
    let limits = state
        .throttle
        .destinations
        .get(id.as_str())
        .copied()
        .unwrap_or(state.throttle.default);
    let r = &state.runtime;
    vec![
        limits.rate_per_second.to_string(),
        limits.burst.to_string(),
        limits.max_in_flight.to_string(),
        r.timeout_ms.to_string(),
        r.max_attempts.to_string(),
        r.horizon_seconds.to_string(),
        r.late_after_seconds
            .map_or("none".to_owned(), |s| s.to_string()),
        r.disable_after_seconds.to_string(),
        r.disable_after_failures.to_string(),
    ]
}

/// `POST /console/destinations/{id}/settings`.
pub async fn save(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
    form: web::Bytes,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(&form)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let csrf = pairs
        .iter()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    viewer.check_csrf(csrf)?;
    viewer.may_act()?;
    viewer.sees_every_tenant()?;
    let d = in_region(&state, &id).await?;
    let body = only_changed(body(&pairs)?, &d);
    let mut change = read_object::<ChangeDestination>(&body.to_string())
        .map_err(|e| ConsoleError::bad("form", e.to_string()))?
        .validate()?;
    // Made against the version the form showed (the store refuses it if
    // the destination changed since).
    change.if_match = pairs
        .iter()
        .find(|(k, _)| k == "version")
        .map(|(_, v)| v.clone());
    state
        .acting(&viewer.caller)
        .update_destination(&d.id, change)
        .await?;
    info!(state.log, "destination settings changed from the console";
          "destination" => %d.id, "by" => viewer.caller_name());
    Ok(see_other(&format!(
        "/console/destinations/{}/settings",
        d.id.as_str()
    )))
}

/// The body without what the form left as `d` has it: a save sends only
/// what the operator changed, so it touches nothing else.
fn only_changed(mut body: Value, d: &Destination) -> Value {
    let Some(fields) = body.as_object_mut() else {
        return body;
    };
    let now = body_of(d);
    fields.retain(|name, value| now.get(name) != Some(value));
    body
}

/// The body that would leave `d` as it is (as [`body`] writes it).
fn body_of(d: &Destination) -> Map<String, Value> {
    let mut pairs: Vec<(String, String)> = current_numbers(d)
        .into_iter()
        .map(|(name, _, value)| (name.to_owned(), value))
        .collect();
    let mut plain = Vec::new();
    for h in &d.settings.headers {
        match &h.value {
            HeaderValue::Plain(v) => plain.push(format!("{}: {v}", h.name)),
            HeaderValue::Secret { .. } => pairs.push(("keep_secret".into(), h.name.clone())),
        }
    }
    pairs.push(("headers".into(), plain.join("\n")));
    match body(&pairs) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// The `PATCH` body the form stands for: every number (empty: `null`),
/// and the headers: the plain ones, the secrets kept, a new secret.
fn body(pairs: &[(String, String)]) -> Result<Value, ConsoleError> {
    let field = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.trim());
    let mut body = Map::new();
    let names = SETTING_NAMES
        .iter()
        .chain(THRESHOLDS.iter().map(|(name, _)| name));
    for name in names {
        let value = match field(name) {
            None | Some("") => Value::Null,
            Some(text) => match text.parse::<f64>() {
                Ok(n) if n.fract() == 0.0 && n.abs() < 9e15 => json!(n as i64),
                Ok(n) if *name == "rate_per_second" => json!(n),
                _ => {
                    return Err(ConsoleError::bad(
                        name,
                        format!("{text:?} is not a number this setting takes"),
                    ))
                }
            },
        };
        body.insert((*name).to_owned(), value);
    }
    let mut headers = Vec::new();
    for line in field("headers").unwrap_or_default().lines() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(ConsoleError::bad(
                "headers",
                "each line must be `Name: value`",
            ));
        };
        headers.push(json!({"name": name.trim(), "value": value.trim_start()}));
    }
    for (_, name) in pairs.iter().filter(|(k, _)| k == "keep_secret") {
        headers.push(json!({"name": name, "secret": true}));
    }
    if let Some(name) = field("secret_name").filter(|n| !n.is_empty()) {
        let value = pairs
            .iter()
            .find(|(k, _)| k == "secret_value")
            .map(|(_, v)| v.as_str())
            .unwrap_or_default();
        headers.push(json!({"name": name, "value": value, "secret": true}));
    }
    body.insert("headers".into(), Value::Array(headers));
    Ok(Value::Object(body))
}

async fn in_region(state: &ConsoleState, id: &str) -> Result<Destination, ConsoleError> {
    let id = DestinationId::new(id)?;
    state
        .store
        .destination(&id)
        .await?
        .filter(|d| d.region == state.region)
        .ok_or_else(|| {
            ConsoleError::NotFound(format!(
                "no destination {} in {}",
                remit::domain::quoted(id.as_str()),
                state.region
            ))
        })
}
