//! Tasks: the search (by id, tenant, reminder, destination, state and
//! time range, newest first, a page at a time), a task's page (its
//! envelope and attempts, never its payload) and replaying one failed
//! task with the same store call as `POST /v1/tasks/{id}/replay` (its
//! cancel and move are `task_changes`). A
//! tenant-limited token sees only its tenants' tasks; another's task page
//! is answered as one that does not exist.

use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use remit::domain::{Attempt, Task, TaskState, WaitingChange};
use remit::store::{Replayed, Reports, Schedule};
use serde::Deserialize;
use slog::info;

use super::error::ConsoleError;
use super::layout::{instant, maybe_instant, see_other, Page, Section};
use super::replays::{bulk_cancel_form, bulk_replay_form};
use super::search::{task_id, Search};
use super::session;
use super::state::ConsoleState;
use super::task_access::own_task;
use super::task_changes;

/// Tasks listed on one page.
const PAGE_SIZE: u32 = 50;

/// `GET /console/tasks?…`.
pub async fn search(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    query: web::Query<Search>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    let filter = query.filter(&viewer.caller)?;
    let before = Search::get(&query.before)
        .map(|v| task_id(v, "before"))
        .transpose()?;
    let found = state
        .reports
        .search_tasks(state.region, &filter, before, PAGE_SIZE)
        .await?;
    let read_from = super::read_source::note(&state).await;
    Ok(Page {
        title: "Tasks",
        section: Section::Tasks,
        viewer: Some(&viewer),
        refresh: false,
        body: html! {
            h1 { "Tasks in " (state.region.to_string()) }
            (read_from)
            (search_form(&query))
            @if found.tasks.is_empty() {
                p #no-tasks { "No task matches." }
            } @else {
                div.scroll {
                    table #tasks {
                        thead {
                            tr {
                                th scope="col" { "task" }
                                th scope="col" { "state" }
                                th scope="col" { "tenant" }
                                th scope="col" { "reminder" }
                                th scope="col" { "destination" }
                                th scope="col" { "not before" }
                                th scope="col" { "attempts" }
                                th scope="col" { "failure" }
                            }
                        }
                        tbody {
                            @for task in &found.tasks { (row(task)) }
                        }
                    }
                }
                @if let Some(next) = found.next {
                    p { a href=(query.next_page(next)) rel="next" { "Older tasks" } }
                }
            }
            @if viewer.admin() {
                (bulk_replay_form(&viewer, &query))
                (bulk_cancel_form(&viewer, &query))
            }
        },
    }
    .render())
}

fn search_form(query: &Search) -> Markup {
    let value = |field: &Option<String>| Search::get(field).unwrap_or("").to_owned();
    let field = |name: &str, label: &str, current: String, hint: &str| {
        html! {
            div.field {
                label for=(format!("search-{name}")) { (label) }
                input id=(format!("search-{name}")) name=(name) type="text" value=(current)
                    placeholder=(hint);
            }
        }
    };
    let selected = value(&query.state);
    html! {
        form #task-search method="get" action="/console/tasks" {
            (field("id", "Task id", value(&query.id), ""))
            (field("tenant", "Tenant", value(&query.tenant), ""))
            (field("reminder", "Reminder", value(&query.reminder), ""))
            (field("destination", "Destination", value(&query.destination), ""))
            div.field {
                label for="search-state" { "State" }
                select #search-state name="state" {
                    option value="" { "any" }
                    @for state in TaskState::ALL.map(TaskState::as_str) {
                        @if selected == state {
                            option value=(state) selected { (state) }
                        } @else {
                            option value=(state) { (state) }
                        }
                    }
                }
            }
            (field("from", "Not before, from (UTC)", value(&query.from), "2026-12-04T09:30"))
            (field("until", "Not before, until (UTC)", value(&query.until), "2026-12-04T18:00"))
            input type="hidden" name="before" value="";
            button #search-button type="submit" { "Search" }
        }
    }
}

fn row(task: &Task) -> Markup {
    let id = task.id.0.to_string();
    html! {
        tr data-task-id=(id) {
            th scope="row" { a href=(format!("/console/tasks/{id}")) { code { (id) } } }
            td data-field="state" { (task.state.as_str()) }
            td { (task.tenant_id.as_str()) }
            td { (task.reminder_id.as_str()) }
            td { (task.destination_id.as_str()) }
            td { (instant(task.not_before)) }
            td.number { (task.attempt_count) }
            td { (task.failure_reason.as_deref().unwrap_or("")) }
        }
    }
}

/// `GET /console/tasks/{id}`.
pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    let task = own_task(&state, &viewer, &id).await?;
    let attempts = state.store.attempts(task.id).await?;
    let title = format!("Task {}", task.id.0);
    Ok(Page {
        title: &title,
        section: Section::Tasks,
        viewer: Some(&viewer),
        refresh: !task.state.is_terminal(),
        body: html! {
            h1 { "Task " code { (task.id.0.to_string()) } }
            (envelope(&task))
            @if viewer.admin() && task.state == TaskState::Failed {
                form data-action="replay" method="post"
                    action=(format!("/console/tasks/{}/replay", task.id.0)) {
                    (viewer.csrf_input())
                    button #replay-button type="submit" { "Replay this task" }
                }
            }
            (task_changes::forms(&viewer, &task))
            h2 { "Attempts" }
            @if attempts.is_empty() {
                p { "No attempt yet." }
            }
            div.scroll {
                table #attempts {
                    thead {
                        tr {
                            th scope="col" { "#" }
                            th scope="col" { "status" }
                            th scope="col" { "Retry-After (raw)" }
                            th scope="col" { "Retry-After (deadline)" }
                            th scope="col" { "received at" }
                            th scope="col" { "outcome" }
                            th scope="col" { "lease owner" }
                        }
                    }
                    tbody {
                        @for attempt in &attempts { (attempt_row(attempt)) }
                    }
                }
            }
        },
    }
    .render())
}

/// Everything about the task but its payload.
fn envelope(task: &Task) -> Markup {
    let item = |name: &str, label: &str, value: Markup| {
        html! { div { dt { (label) } dd data-field=(name) { (value) } } }
    };
    let text = |value: &str| html! { (value) };
    let next_attempt = |task: &Task| match task.state {
        TaskState::Pending | TaskState::RetryWait => instant(task.available_at),
        TaskState::Leased => html! { "under way" },
        _ => html! { "none: it has ended" },
    };
    html! {
        dl.envelope {
            (item("state", "state", text(task.state.as_str())))
            (item("tenant_id", "tenant", text(task.tenant_id.as_str())))
            (item("reminder_id", "reminder", text(task.reminder_id.as_str())))
            (item("destination_id", "destination", text(task.destination_id.as_str())))
            (item("region", "region", text(&task.region.to_string())))
            (item("idempotency_key", "idempotency key", html! { code { (task.idempotency_key) } }))
            (item("ordering_key", "ordering key", text(task.ordering_key.as_ref().map_or("—", |k| k.as_str()))))
            (item("not_before", "not before", instant(task.not_before)))
            (item("available_at", "next attempt", next_attempt(task)))
            (item("retry_horizon_at", "retry horizon", instant(task.retry_horizon_at)))
            (item("attempt_count", "attempts", text(&task.attempt_count.to_string())))
            (item("last_status", "last status", text(&task.last_status.map_or("—".into(), |s| s.to_string()))))
            (item("failure_reason", "failure reason", text(task.failure_reason.as_deref().unwrap_or("—"))))
            (item("lease_owner", "lease owner", text(task.lease_owner.as_deref().unwrap_or("—"))))
            (item("created_at", "created", instant(task.created_at)))
            (item("delivered_at", "delivered", maybe_instant(task.delivered_at)))
            (item("finalized_at", "ended", maybe_instant(task.finalized_at)))
            @if let Some(c) = &task.cancelled {
                (item("cancelled", "cancelled", html! { (instant(c.at)) " by " (c.by) }))
            }
            @if let Some(change) = task.waiting_change {
                (item("waiting_change", "after the attempt in flight", text(&match change {
                    WaitingChange::Cancel => "cancel".to_owned(),
                    WaitingChange::Move(at) => format!("move to {}", at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
                })))
            }
            @if let Some(at) = task.payload_erased_at {
                (item("payload_erased_at", "payload erased", instant(at)))
            }
        }
    }
}

fn attempt_row(attempt: &Attempt) -> Markup {
    let seen = &attempt.observed;
    let status = match (seen.http_status, &seen.transport_error) {
        (Some(status), _) => status.to_string(),
        (None, Some(error)) => error.clone(),
        (None, None) => "—".into(),
    };
    html! {
        tr.attempt {
            td.number { (attempt.attempt_number) }
            td data-field="status" { (status) }
            td data-field="retry_after_raw" { (seen.retry_after_raw.as_deref().unwrap_or("—")) }
            td data-field="retry_after_deadline" { (maybe_instant(seen.retry_after_deadline)) }
            td data-field="received_at" { (maybe_instant(seen.received_at.or(Some(attempt.recorded_at)))) }
            td data-field="outcome" { (attempt.outcome.as_str()) }
            td { (attempt.lease_owner) }
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct ReplayOne {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/tasks/{id}/replay`: the failed task back to `pending`
/// with a fresh horizon, then its page again.
pub async fn replay(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
    form: web::Form<ReplayOne>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.check_csrf(&form.csrf)?;
    viewer.may_act()?;
    let task = own_task(&state, &viewer, &id).await?;
    match state
        .acting(&viewer.caller)
        .replay(task.id, state.horizon)
        .await?
    {
        Replayed::Replayed(_) => {
            info!(state.log, "task replayed from the console";
                  "task" => %task.id.0, "by" => viewer.caller_name());
            Ok(see_other(&format!("/console/tasks/{}", task.id.0)))
        }
        Replayed::NotFailed(task)
            if task.state == remit::domain::TaskState::Failed
                && task.payload_erased_at.is_none() =>
        {
            Err(ConsoleError::Conflict(format!(
                "task {} is not replayed: its destination {} was deleted",
                task.id.0, task.destination_id
            )))
        }
        Replayed::NotFailed(task) => Err(ConsoleError::Conflict(format!(
            "task {} is {}; only a failed task can be replayed",
            task.id.0,
            task.state.as_str()
        ))),
        Replayed::NotFound => Err(ConsoleError::NotFound(format!(
            "no task with id {}",
            task.id.0
        ))),
    }
}
