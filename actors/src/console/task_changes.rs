//! A task's page's changes: cancel it, or move it to a new deadline, with
//! the same store calls as `POST /v1/tasks/{id}/cancel` and `…/reschedule`
//! (an admin's, like the replay beside them). Each answers with the task's
//! page again, which says what happened.

use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use remit::domain::{Task, TaskState};
use remit::store::{why_not_moved, Cancel, Changes, Move, Reschedule};
use serde::Deserialize;
use slog::info;

use super::error::ConsoleError;
use super::layout::see_other;
use super::session;
use super::session::Viewer;
use super::state::ConsoleState;
use super::task_access::own_task;

/// The forms a task's page offers an admin: cancel while it has not
/// ended, move while it has not been delivered.
pub fn forms(viewer: &Viewer, task: &Task) -> Markup {
    let id = task.id.0;
    let may_cancel = !task.state.is_terminal() && task.waiting_change.is_none();
    let may_move = task.state != TaskState::Delivered
        && task.payload_erased_at.is_none()
        && task.waiting_change != Some(remit::domain::WaitingChange::Cancel)
        && !(task.ordering_key.is_some() && task.attempt_count > 0);
    html! {
        @if viewer.admin() && may_cancel {
            form data-action="cancel" method="post" action=(format!("/console/tasks/{id}/cancel")) {
                (viewer.csrf_input())
                button #cancel-button type="submit" { "Cancel this task" }
            }
        }
        @if viewer.admin() && may_move {
            form data-action="reschedule" method="post"
                action=(format!("/console/tasks/{id}/reschedule")) {
                (viewer.csrf_input())
                label for="not_before" { "New deadline (RFC 3339)" }
                input #not_before name="not_before" type="text" required
                    value=(task.not_before.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
                button #reschedule-button type="submit" { "Move this task" }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct CancelForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/tasks/{id}/cancel`.
pub async fn cancel(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
    form: web::Form<CancelForm>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.check_csrf(&form.csrf)?;
    viewer.may_act()?;
    let task = own_task(&state, &viewer, &id).await?;
    let page = format!("/console/tasks/{}", task.id.0);
    match state
        .acting(&viewer.caller)
        .cancel(task.id, &viewer.caller_name())
        .await?
    {
        Cancel::Cancelled(_) | Cancel::AfterAttempt(_) | Cancel::AlreadyCancelled(_) => {
            info!(state.log, "task cancelled from the console";
                  "task" => %task.id.0, "by" => viewer.caller_name());
            Ok(see_other(&page))
        }
        Cancel::Ended(task) => Err(ConsoleError::Conflict(format!(
            "task {} is {}; only a task that has not ended can be cancelled",
            task.id.0,
            task.state.as_str()
        ))),
        Cancel::NotFound => Err(ConsoleError::NotFound(format!(
            "no task with id {}",
            task.id.0
        ))),
    }
}

#[derive(Debug, Deserialize)]
pub struct RescheduleForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    not_before: String,
}

/// `POST /console/tasks/{id}/reschedule`.
pub async fn reschedule(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
    form: web::Form<RescheduleForm>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.check_csrf(&form.csrf)?;
    viewer.may_act()?;
    let task = own_task(&state, &viewer, &id).await?;
    let not_before = chrono::DateTime::parse_from_rfc3339(form.not_before.trim())
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| ConsoleError::BadRequest {
            field: "not_before",
            message: format!("must be RFC 3339 with an offset, e.g. 2026-08-13T09:00:00Z ({e})"),
        })?;
    let change = Reschedule {
        not_before,
        payload: None,
        by: viewer.caller_name(),
        // Bringing an ended task back is a replay: an admin's.
        revive: viewer.admin(),
    };
    let page = format!("/console/tasks/{}", task.id.0);
    match state
        .acting(&viewer.caller)
        .reschedule(task.id, &change)
        .await?
    {
        Move::Moved(_) | Move::AfterAttempt(_) => {
            info!(state.log, "task moved from the console";
                  "task" => %task.id.0, "by" => viewer.caller_name());
            Ok(see_other(&page))
        }
        Move::Refused(task) => Err(ConsoleError::Conflict(format!(
            "task {} is not moved: {}",
            task.id.0,
            why_not_moved(&task, false)
        ))),
        Move::DestinationDeleted(task) => Err(ConsoleError::Conflict(format!(
            "task {} is not moved: its destination {} was deleted",
            task.id.0, task.destination_id
        ))),
        Move::Ended(task) => Err(ConsoleError::Conflict(format!(
            "task {} is {}; bringing it back is a replay, which takes an admin's token",
            task.id.0,
            task.state.as_str()
        ))),
        Move::NotFound => Err(ConsoleError::NotFound(format!(
            "no task with id {}",
            task.id.0
        ))),
    }
}
