//! The destinations page: each destination of the region with its state
//! (active, paused until, disabled and why), configured and announced
//! rate, tasks in flight, due backlog, tasks retrying, how long its oldest
//! reminder has waited past its deadline, its last error and when (gone
//! once it recovers), and its 429s and failures in the last hour (replayed
//! failures included); and, for an admin token, enable, disable and
//! rotate its signing secret, through the same checks and store calls as
//! /v1 (`DisableDestination`, `RotateSecret`).

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use remit::domain::{Destination, DestinationId, Rotation};
use remit::store::console::DestinationSummary;
use remit::store::{Destinations, Reports};
use serde::Deserialize;
use slog::info;

use super::error::ConsoleError;
use super::layout::{instant, last_error, see_other, state_text, waited, Page, Section};
use super::session;
use super::session::Viewer;
use super::state::ConsoleState;
use crate::api::{DisableDestination, RotateSecret};

/// `GET /console/destinations`.
pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.sees_every_tenant()?;
    let summaries = state.reports.destination_summaries(state.region).await?;
    let read_from = super::read_source::note(&state).await;
    let now = Utc::now();
    Ok(Page {
        title: "Destinations",
        section: Section::Destinations,
        viewer: Some(&viewer),
        refresh: true,
        body: html! {
            h1 { "Destinations in " (state.region.to_string()) }
            (read_from)
            @if summaries.is_empty() {
                p { "No destination is registered in this region." }
            } @else {
                div.scroll {
                    table #destinations {
                        thead {
                            tr {
                                th scope="col" { "destination" }
                                th scope="col" { "state" }
                                th scope="col" { "rate" }
                                th scope="col" { "in flight" }
                                th scope="col" { "due backlog" }
                                th scope="col" { "retrying" }
                                th scope="col" { "oldest wait" }
                                th scope="col" { "last error" }
                                th scope="col" { "429s (1 h)" }
                                th scope="col" { "failed (1 h)" }
                                @if viewer.admin() { th scope="col" { "actions" } }
                            }
                        }
                        tbody {
                            @for summary in &summaries {
                                (row(&state, &viewer, summary, now))
                            }
                        }
                    }
                }
            }
        },
    }
    .render())
}

fn row(
    state: &ConsoleState,
    viewer: &Viewer,
    summary: &DestinationSummary,
    now: chrono::DateTime<Utc>,
) -> Markup {
    let d = &summary.destination;
    let file = state
        .throttle
        .destinations
        .get(d.id.as_str())
        .copied()
        .unwrap_or(state.throttle.default);
    let rate = d.settings.rate_per_second.unwrap_or(file.rate_per_second);
    let tasks = format!(
        "/console/tasks?{}",
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair("destination", d.id.as_str())
            .finish()
    );
    html! {
        tr data-destination=(d.id.as_str()) {
            th scope="row" {
                a href=(tasks) { (d.id.as_str()) }
                br;
                span.url { (d.url.as_str()) }
                br;
                a.health href=(super::destination_page::path(&d.id)) { "health, last 7 days" }
            }
            td data-field="state" { (state_text(d)) }
            td data-field="rate" {
                (rate) "/s configured"
                @if let Some(q) = &summary.learned_quota {
                    br;
                    "announced: " (format!("{:.0}", q.remaining))
                    @if let Some(limit) = q.limit { " of " (limit) }
                    " left until " (instant(q.resets_at))
                }
            }
            td.number data-field="in_flight" { (summary.in_flight) }
            td.number data-field="backlog" { (summary.due_backlog) }
            td.number data-field="retrying" { (summary.retrying) }
            td data-field="oldest_wait" { (waited(summary.oldest_due, now)) }
            td data-field="last_error" { (last_error(&d.health)) }
            td.number data-field="rate_limited" { (summary.rate_limited_last_hour) }
            td.number data-field="failed" { (summary.failed_last_hour) }
            @if viewer.admin() {
                td.actions { (actions(viewer, d)) }
            }
        }
    }
}

fn actions(viewer: &Viewer, d: &Destination) -> Markup {
    let id = d.id.as_str();
    html! {
        @if d.enabled {
            form data-action="disable" method="post" action="/console/destinations/disable" {
                (viewer.csrf_input())
                input type="hidden" name="destination" value=(id);
                input name="reason" type="text" maxlength="500"
                    aria-label=(format!("Why disable {id}")) placeholder="reason (optional)";
                button type="submit" { "Disable" }
            }
        } @else {
            form data-action="enable" method="post" action="/console/destinations/enable" {
                (viewer.csrf_input())
                input type="hidden" name="destination" value=(id);
                button type="submit" { "Enable" }
            }
        }
        a.settings href=(format!("/console/destinations/{id}/settings")) { "Settings" }
        form data-action="rotate" method="post" action="/console/destinations/rotate" {
            (viewer.csrf_input())
            input type="hidden" name="destination" value=(id);
            button type="submit" { "Rotate secret" }
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct Action {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    destination: String,
    reason: Option<String>,
}

/// `POST /console/destinations/{enable|disable|rotate}`.
pub async fn act(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    action: web::Path<String>,
    form: web::Form<Action>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.check_csrf(&form.csrf)?;
    viewer.may_act()?;
    viewer.sees_every_tenant()?;
    let id = DestinationId::new(&form.destination)?;
    let in_region = state
        .store
        .destination(&id)
        .await?
        .is_some_and(|d| d.region == state.region);
    if !in_region {
        return Err(ConsoleError::NotFound(format!(
            "no destination {} in {}",
            remit::domain::quoted(id.as_str()),
            state.region
        )));
    }
    let who = viewer.caller_name();
    match action.as_str() {
        "enable" => {
            state.acting(&viewer.caller).enable_destination(&id).await?;
            info!(state.log, "destination enabled from the console"; "destination" => %id, "by" => who);
            Ok(see_other("/console/destinations"))
        }
        "disable" => {
            let reason = form.reason.clone().filter(|r| !r.trim().is_empty());
            let reason = DisableDestination::new(reason).validate()?;
            state
                .acting(&viewer.caller)
                .disable_destination(&id, reason)
                .await?;
            info!(state.log, "destination disabled from the console"; "destination" => %id, "by" => who);
            Ok(see_other("/console/destinations"))
        }
        "rotate" => {
            let checked = RotateSecret::default().validate(Utc::now())?;
            state
                .acting(&viewer.caller)
                .rotate_secret(&id, checked.rotation.clone())
                .await?;
            info!(state.log, "signing secret rotated from the console"; "destination" => %id, "by" => who);
            Ok(rotated(&viewer, &id, &checked.rotation))
        }
        other => Err(ConsoleError::NotFound(format!(
            "no destination action {}",
            remit::domain::quoted(other)
        ))),
    }
}

/// The answer to a rotation: the new secret, shown this once.
fn rotated(viewer: &Viewer, id: &DestinationId, rotation: &Rotation) -> HttpResponse {
    Page {
        title: "Secret rotated",
        section: Section::Destinations,
        viewer: Some(viewer),
        refresh: false,
        body: html! {
            h1 { "New signing secret for " (id.as_str()) }
            p {
                "Give this secret to the receiver now: it is shown this once. "
                "Webhooks are signed with the old and the new secret until "
                (instant(rotation.old_expires_at))
                "."
            }
            p { code #new-secret { (rotation.secret) } }
            p { a href="/console/destinations" { "Back to the destinations" } }
        },
    }
    .render()
}
