//! Bulk replay and bulk cancel from the console: the task search's
//! filter, posted as a job (`Database::create_job`, of either
//! action) that the region's job runner works through batch by batch,
//! durably, and the job's page, which refreshes itself until the job has
//! finished. Only failed tasks are replayed; only tasks that have not
//! ended are cancelled.

use actix_web::{web, HttpRequest, HttpResponse};
use maud::{html, Markup};
use remit::domain::{DestinationId, ReminderId, TenantId};
use remit::store::{Job, JobAction, JobFilter, Jobs, NewJob};
use serde::Deserialize;
use slog::info;

use super::error::ConsoleError;
use super::layout::{instant, maybe_instant, see_other, Page, Section};
use super::search::{time, Search};
use super::session;
use super::session::Viewer;
use super::state::ConsoleState;

/// The bulk replay form under a search's results, carrying its filter.
pub fn bulk_replay_form(viewer: &Viewer, search: &Search) -> Markup {
    let value = |field: &Option<String>| field.as_deref().map(str::trim).unwrap_or("").to_owned();
    html! {
        section aria-labelledby="bulk-replay-heading" {
            h2 #bulk-replay-heading { "Bulk replay" }
            p {
                "Sends every " strong { "failed" } " task that matches this search's tenant, reminder, destination and time range round again (the task id and state fields do not apply; at least one of the others must be set). It runs as a job and survives a restart."
            }
            form #bulk-replay method="post" action="/console/replays" {
                (viewer.csrf_input())
                input type="hidden" name="tenant" value=(value(&search.tenant));
                input type="hidden" name="reminder" value=(value(&search.reminder));
                input type="hidden" name="destination" value=(value(&search.destination));
                input type="hidden" name="reason" value=(value(&search.reason));
                input type="hidden" name="from" value=(value(&search.from));
                input type="hidden" name="until" value=(value(&search.until));
                button #bulk-replay-button type="submit" { "Replay every failed task that matches" }
            }
        }
    }
}

/// The bulk cancel form beside it, carrying the same filter but the
/// failure reason (a task that has not ended has none).
pub fn bulk_cancel_form(viewer: &Viewer, search: &Search) -> Markup {
    let value = |field: &Option<String>| field.as_deref().map(str::trim).unwrap_or("").to_owned();
    html! {
        section aria-labelledby="bulk-cancel-heading" {
            h2 #bulk-cancel-heading { "Bulk cancel" }
            p {
                "Cancels every task that matches this search's tenant, reminder, destination and time range and has " strong { "not ended" } " (the task id and state fields do not apply; at least one of the others must be set): one waiting ends cancelled at once, one in flight after its attempt unless that attempt delivers it. Tasks scheduled after you press it are left alone. It runs as a job and survives a restart."
            }
            form #bulk-cancel method="post" action="/console/cancels" {
                (viewer.csrf_input())
                input type="hidden" name="tenant" value=(value(&search.tenant));
                input type="hidden" name="reminder" value=(value(&search.reminder));
                input type="hidden" name="destination" value=(value(&search.destination));
                input type="hidden" name="from" value=(value(&search.from));
                input type="hidden" name="until" value=(value(&search.until));
                button #bulk-cancel-button type="submit" { "Cancel every matching task" }
            }
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct BulkReplay {
    #[serde(default)]
    csrf: String,
    tenant: Option<String>,
    reminder: Option<String>,
    destination: Option<String>,
    reason: Option<String>,
    from: Option<String>,
    until: Option<String>,
}

fn given(field: &Option<String>) -> Option<&str> {
    field.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

impl BulkReplay {
    fn filter(&self, action: JobAction) -> Result<JobFilter, ConsoleError> {
        let reason = given(&self.reason).map(str::to_owned);
        if action == JobAction::Cancel && reason.is_some() {
            return Err(ConsoleError::bad(
                "reason",
                "a cancel takes no failure reason: only a failed task has one",
            ));
        }
        if reason
            .as_deref()
            .is_some_and(|r| r.len() > 200 || r.chars().any(char::is_control))
        {
            return Err(ConsoleError::bad(
                "reason",
                "must be a failure reason such as max_attempts or http_410",
            ));
        }
        let filter = JobFilter {
            tenant: given(&self.tenant).map(TenantId::new).transpose()?,
            reminder: given(&self.reminder).map(ReminderId::new).transpose()?,
            destination: given(&self.destination)
                .map(DestinationId::new)
                .transpose()?,
            reason,
            from: given(&self.from).map(|v| time(v, "from")).transpose()?,
            until: given(&self.until).map(|v| time(v, "until")).transpose()?,
        };
        // As `POST /v1/tasks/replay` and `…/cancel`: a click must not
        // replay a whole region's failures, or cancel all its tasks, by
        // accident.
        if filter == JobFilter::default() {
            return Err(ConsoleError::bad(
                "filter",
                "search by at least one of tenant, reminder, destination or time range first",
            ));
        }
        if let (Some(from), Some(until)) = (filter.from, filter.until) {
            if from >= until {
                return Err(ConsoleError::bad("until", "must be after from"));
            }
        }
        Ok(filter)
    }
}

/// `POST /console/replays`: records the replay, then shows it.
pub async fn create(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    form: web::Form<BulkReplay>,
) -> Result<HttpResponse, ConsoleError> {
    record(request, state, form, JobAction::Replay).await
}

/// `POST /console/cancels`: records the cancel, then shows it.
pub async fn cancel(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    form: web::Form<BulkReplay>,
) -> Result<HttpResponse, ConsoleError> {
    record(request, state, form, JobAction::Cancel).await
}

async fn record(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    form: web::Form<BulkReplay>,
    action: JobAction,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    viewer.check_csrf(&form.csrf)?;
    viewer.may_act()?;
    let filter = form.filter(action)?;
    let called = title(action).to_lowercase();
    // A tenant-limited admin acts only within one of its tenants.
    if viewer.caller.tenant_limited()
        && !filter
            .tenant
            .as_ref()
            .is_some_and(|t| viewer.caller.sees_tenant(t))
    {
        return Err(ConsoleError::Forbidden(format!(
            "this token is limited to tenants: search by one of them before a {called}"
        )));
    }
    let job = state
        .acting(&viewer.caller)
        .create_job(NewJob {
            region: state.region,
            action,
            filter,
            requested_by: viewer.caller_name(),
            horizon: state.horizon,
        })
        .await?;
    info!(state.log, "{} requested from the console", called;
          "job" => %job.id, "by" => viewer.caller_name());
    Ok(see_other(&format!("/console/replays/{}", job.id)))
}

/// A job's name, as its page's title.
fn title(action: JobAction) -> &'static str {
    match action {
        JobAction::Replay => "Bulk replay",
        JobAction::Cancel => "Bulk cancel",
    }
}

/// `GET /console/replays/{id}`.
pub async fn page(
    request: HttpRequest,
    state: web::Data<ConsoleState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ConsoleError> {
    let viewer = session::viewer(&request, &state).await?;
    let missing = || ConsoleError::NotFound(format!("no bulk job {}", remit::domain::quoted(&id)));
    let id = uuid::Uuid::parse_str(&id).map_err(|_| missing())?;
    let job = state
        .store
        .job(id)
        .await?
        .filter(|job| job.region == state.region && visible(&viewer, job))
        .ok_or_else(missing)?;
    let finished = job.finished();
    let (done, after, list, listed) = match job.action {
        JobAction::Replay => (
            " failed tasks replayed so far.",
            "",
            "/console/tasks?state=failed",
            "Failed tasks",
        ),
        JobAction::Cancel => (
            " tasks cancelled so far",
            " (those in flight once their attempt ends without a delivery).",
            "/console/tasks?state=cancelled",
            "Cancelled tasks",
        ),
    };
    Ok(Page {
        title: title(job.action),
        section: Section::Tasks,
        viewer: Some(&viewer),
        refresh: !finished,
        body: html! {
            h1 { (title(job.action)) }
            div #replay-job data-job-state=(if finished { "finished" } else { "running" })
                data-action=(job.action.as_str())
                data-replayed=(if job.action == JobAction::Replay { job.replayed } else { 0 })
                data-cancelled=(if job.action == JobAction::Cancel { job.replayed } else { 0 }) {
                p.status {
                    @if finished { "Finished: " } @else { "Running: " }
                    strong { (job.replayed) } (done) (after)
                }
                dl.envelope {
                    div { dt { "job" } dd { code { (job.id.to_string()) } } }
                    div { dt { "action" } dd { (job.action.as_str()) } }
                    div { dt { "requested by" } dd { (job.requested_by) } }
                    div { dt { "requested at" } dd { (instant(job.created_at)) } }
                    div { dt { "finished at" } dd { (maybe_instant(job.finished_at)) } }
                    div { dt { "filter" } dd { (describe(&job.filter)) } }
                }
            }
            p { a href=(list) { (listed) } }
        },
    }
    .render())
}

/// A tenant-limited token sees only jobs limited to one of its tenants.
fn visible(viewer: &Viewer, job: &Job) -> bool {
    !viewer.caller.tenant_limited()
        || job
            .filter
            .tenant
            .as_ref()
            .is_some_and(|t| viewer.caller.sees_tenant(t))
}

fn describe(filter: &JobFilter) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &filter.tenant {
        parts.push(format!("tenant {t}"));
    }
    if let Some(r) = &filter.reminder {
        parts.push(format!("reminder {r}"));
    }
    if let Some(d) = &filter.destination {
        parts.push(format!("destination {d}"));
    }
    if let Some(r) = &filter.reason {
        parts.push(format!("reason {r}"));
    }
    if let Some(f) = filter.from {
        parts.push(format!("not before from {}", f.to_rfc3339()));
    }
    if let Some(u) = filter.until {
        parts.push(format!("not before until {}", u.to_rfc3339()));
    }
    if parts.is_empty() {
        "every task of the region".into()
    } else {
        parts.join(", ")
    }
}
