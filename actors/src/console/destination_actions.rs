//! What an admin token may do to a destination from the console, through
//! the same checks and store calls as /v1 (`DisableDestination`,
//! `RotateSecret`, the retry-now and delete calls): the short row of
//! actions on the destinations list, and on the destination's own page
//! every act the API offers for one destination (disable or enable, its
//! settings, retry now, replay its failed tasks, rotate its signing
//! secret, delete it), each asking for a confirmation before it is sent
//! (`data-confirm`, which console.js turns into a dialog).

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use remit::domain::{Destination, DestinationId, Rotation};
use remit::store::{Changes, Destinations, JobAction, JobFilter, NewJob};
use serde::Deserialize;
use slog::info;

use super::error::ConsoleError;
use super::layout::{instant, see_other, Page, Section};
use super::session;
use super::session::Viewer;
use super::state::ConsoleState;
use crate::api::{DisableDestination, RotateSecret};

/// Where an action came from, so its answer returns there: a fixed
/// word, never a URL.
const FROM_PAGE: &str = "page";

/// The actions in a destination's row of the list.
pub fn in_list(viewer: &Viewer, d: &Destination) -> Markup {
    let id = d.id.as_str();
    html! {
        (switch(viewer, d, None))
        a.settings href=(format!("/console/destinations/{id}/settings")) { "Settings" }
        form data-action="rotate" method="post" action="/console/destinations/rotate"
            data-confirm=(rotate_question(id)) {
            (viewer.csrf_input())
            input type="hidden" name="destination" value=(id);
            button type="submit" { "Rotate secret" }
        }
    }
}

/// Every action on the destination's own page, for an admin token.
pub fn on_page(viewer: &Viewer, d: &Destination) -> Markup {
    let id = d.id.as_str();
    let from = Some(FROM_PAGE);
    html! {
        section #actions aria-labelledby="actions-heading" {
            h2 #actions-heading { "Actions" }
            div.actions {
                (switch(viewer, d, from))
                form data-action="retry-now" method="post" action="/console/destinations/retry-now"
                    data-confirm=(format!("Send {id}'s tasks that wait for a retry now, under its usual throttle?")) {
                    (viewer.csrf_input())
                    input type="hidden" name="destination" value=(id);
                    input type="hidden" name="from" value=(FROM_PAGE);
                    button #retry-now-button type="submit" { "Retry now" }
                }
                form data-action="replay-failed" method="post" action="/console/replays"
                    data-confirm=(format!("Send every failed task of {id} round again?")) {
                    (viewer.csrf_input())
                    input type="hidden" name="destination" value=(id);
                    button #replay-failed-button type="submit" { "Replay its failed tasks" }
                }
                a.settings href=(format!("/console/destinations/{id}/settings")) { "Settings" }
                form data-action="rotate" method="post" action="/console/destinations/rotate"
                    data-confirm=(rotate_question(id)) {
                    (viewer.csrf_input())
                    input type="hidden" name="destination" value=(id);
                    button #rotate-button type="submit" { "Rotate secret" }
                }
                form data-action="delete" method="post" action="/console/destinations/delete"
                    data-confirm=(format!("Delete {id}? This cannot be undone.")) {
                    (viewer.csrf_input())
                    input type="hidden" name="destination" value=(id);
                    label {
                        input type="checkbox" name="cancel_tasks" value="yes";
                        " cancel its tasks that have not ended"
                    }
                    button #delete-button type="submit" { "Delete" }
                }
            }
        }
    }
}

fn rotate_question(id: &str) -> String {
    format!("Make a new signing secret for {id}? It is shown once; the old one keeps signing for a while.")
}

/// Disable (with a reason) or enable, whichever applies.
fn switch(viewer: &Viewer, d: &Destination, from: Option<&str>) -> Markup {
    let id = d.id.as_str();
    html! {
        @if d.enabled {
            form data-action="disable" method="post" action="/console/destinations/disable"
                data-confirm=(format!("Disable {id}? Its tasks wait, unsent, until it is enabled.")) {
                (viewer.csrf_input())
                input type="hidden" name="destination" value=(id);
                @if let Some(from) = from { input type="hidden" name="from" value=(from); }
                input name="reason" type="text" maxlength="500"
                    aria-label=(format!("Why disable {id}")) placeholder="reason (optional)";
                button #disable-button type="submit" { "Disable" }
            }
        } @else {
            form data-action="enable" method="post" action="/console/destinations/enable"
                data-confirm=(format!("Enable {id}? Its waiting tasks go out under its usual throttle.")) {
                (viewer.csrf_input())
                input type="hidden" name="destination" value=(id);
                @if let Some(from) = from { input type="hidden" name="from" value=(from); }
                button #enable-button type="submit" { "Enable" }
            }
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
    /// `page` when the action was taken on the destination's own page.
    from: Option<String>,
    /// `yes` to delete a destination with its tasks that have not ended.
    cancel_tasks: Option<String>,
}

/// `POST /console/destinations/{enable|disable|retry-now|rotate|delete}`.
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
    let back = match form.from.as_deref() {
        Some(FROM_PAGE) => super::layout::destination_path(&id),
        _ => "/console/destinations".to_owned(),
    };
    let store = state.acting(&viewer.caller);
    match action.as_str() {
        "enable" => {
            store.enable_destination(&id).await?;
            info!(state.log, "destination enabled from the console"; "destination" => %id, "by" => who);
            Ok(see_other(&back))
        }
        "disable" => {
            let reason = form.reason.clone().filter(|r| !r.trim().is_empty());
            let reason = DisableDestination::new(reason).validate()?;
            store.disable_destination(&id, reason).await?;
            info!(state.log, "destination disabled from the console"; "destination" => %id, "by" => who);
            Ok(see_other(&back))
        }
        "retry-now" => {
            let moved = store.retry_now(&id, None).await?;
            info!(state.log, "retries made due now from the console"; "destination" => %id,
                  "tasks" => moved, "by" => who);
            Ok(see_other(&format!("{back}?retried={moved}")))
        }
        "rotate" => {
            let checked = RotateSecret::default().validate(Utc::now())?;
            store.rotate_secret(&id, checked.rotation.clone()).await?;
            info!(state.log, "signing secret rotated from the console"; "destination" => %id, "by" => who);
            Ok(rotated(&viewer, &id, &checked.rotation))
        }
        "delete" => {
            let cancel = (form.cancel_tasks.as_deref() == Some("yes")).then(|| NewJob {
                region: state.region,
                action: JobAction::Cancel,
                filter: JobFilter {
                    destination: Some(id.clone()),
                    ..JobFilter::default()
                },
                requested_by: who.clone(),
                horizon: state.horizon,
            });
            store.delete_destination(&id, cancel).await.map_err(|e| {
                e.with_remedy(
                    "tick \"cancel its tasks that have not ended\" to cancel them with it",
                )
            })?;
            info!(state.log, "destination deleted from the console"; "destination" => %id, "by" => who);
            Ok(see_other("/console/destinations"))
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
            p { a href=(super::layout::destination_path(id)) { "Back to " (id.as_str()) } }
        },
    }
    .render()
}
