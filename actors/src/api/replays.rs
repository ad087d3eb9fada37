//! /v1/tasks/replay, /v1/tasks/cancel and /v1/replays/{id}: a bulk replay
//! of every failed task of this region that matches a filter, or a bulk
//! cancel of every task that has not ended, recorded as a job that the
//! region's processes work to the end (`runtime::jobs`), and its progress.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use remit::domain::{DestinationId, InvalidInput, ReminderId, TenantId};
use remit::store::{Job, JobAction, JobFilter, Jobs, NewJob};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::body::read_object;
use super::caller::Admin;
use super::error::ApiError;
use super::error::ErrorBody;
use super::state::ApiState;

/// Which failed tasks to replay. At least one field is needed; every field
/// given narrows the replay.
#[derive(Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"destination_id": "crm", "reason": "max_attempts",
    "from": "2026-08-13T00:00:00Z", "until": "2026-08-14T00:00:00Z"}))]
pub struct ReplayRequest {
    /// Only this tenant's tasks.
    #[schema(min_length = 1, max_length = 200)]
    pub tenant_id: Option<String>,
    /// Only tasks with this reminder id.
    #[schema(min_length = 1, max_length = 200)]
    pub reminder_id: Option<String>,
    /// Only this destination's tasks.
    #[schema(min_length = 1, max_length = 200)]
    pub destination_id: Option<String>,
    /// Only tasks that failed for this reason, exactly as the task shows
    /// it (`max_attempts`, `retry_horizon`, …).
    #[schema(min_length = 1, max_length = 200)]
    pub reason: Option<String>,
    /// Only tasks due (`not_before`) at or after this instant, RFC 3339.
    #[schema(format = DateTime)]
    pub from: Option<String>,
    /// Only tasks due (`not_before`) before this instant, RFC 3339.
    #[schema(format = DateTime)]
    pub until: Option<String>,
}

/// The longest reason accepted, in bytes.
const MAX_REASON_BYTES: usize = 200;

pub(super) fn instant(field: &'static str, text: &str) -> Result<DateTime<Utc>, InvalidInput> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            InvalidInput::new(
                field,
                format!("must be RFC 3339 with an offset, e.g. 2026-08-13T09:00:00Z ({e})"),
            )
        })
}

impl ReplayRequest {
    /// The filter, every field checked; names the field at fault.
    pub fn filter(&self) -> Result<JobFilter, InvalidInput> {
        let reason = match &self.reason {
            Some(r) if r.trim().is_empty() => {
                return Err(InvalidInput::new("reason", "must not be blank when given"))
            }
            Some(r) if r.len() > MAX_REASON_BYTES || r.chars().any(char::is_control) => {
                return Err(InvalidInput::new(
                    "reason",
                    format!("must be at most {MAX_REASON_BYTES} bytes, with no control characters"),
                ))
            }
            r => r.clone(),
        };
        checked(
            JobFilter {
                reason,
                ..fields(
                    &self.tenant_id,
                    &self.reminder_id,
                    &self.destination_id,
                    &self.from,
                    &self.until,
                )?
            },
            "name at least one of tenant_id, reminder_id, destination_id, reason, from, until",
        )
    }
}

/// Which tasks that have not ended to cancel. At least one field is
/// needed; every field given narrows the cancel.
#[derive(Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"tenant_id": "clinic-1", "destination_id": "crm",
    "from": "2026-10-01T00:00:00Z"}))]
pub struct CancelRequest {
    /// Only this tenant's tasks.
    #[schema(min_length = 1, max_length = 200)]
    pub tenant_id: Option<String>,
    /// Only tasks with this reminder id.
    #[schema(min_length = 1, max_length = 200)]
    pub reminder_id: Option<String>,
    /// Only this destination's tasks.
    #[schema(min_length = 1, max_length = 200)]
    pub destination_id: Option<String>,
    /// Only tasks due (`not_before`) at or after this instant, RFC 3339.
    #[schema(format = DateTime)]
    pub from: Option<String>,
    /// Only tasks due (`not_before`) before this instant, RFC 3339.
    #[schema(format = DateTime)]
    pub until: Option<String>,
}

impl CancelRequest {
    /// The filter, every field checked; names the field at fault.
    pub fn filter(&self) -> Result<JobFilter, InvalidInput> {
        checked(
            fields(
                &self.tenant_id,
                &self.reminder_id,
                &self.destination_id,
                &self.from,
                &self.until,
            )?,
            "name at least one of tenant_id, reminder_id, destination_id, from, until",
        )
    }
}

/// The fields both requests take, each checked.
fn fields(
    tenant: &Option<String>,
    reminder: &Option<String>,
    destination: &Option<String>,
    from: &Option<String>,
    until: &Option<String>,
) -> Result<JobFilter, InvalidInput> {
    Ok(JobFilter {
        tenant: tenant.as_deref().map(TenantId::new).transpose()?,
        reminder: reminder.as_deref().map(ReminderId::new).transpose()?,
        destination: destination.as_deref().map(DestinationId::new).transpose()?,
        reason: None,
        from: from.as_deref().map(|t| instant("from", t)).transpose()?,
        until: until.as_deref().map(|t| instant("until", t)).transpose()?,
    })
}

/// Refuses a filter that names nothing (`none_given` says what to name),
/// or a time range that is empty.
fn checked(filter: JobFilter, none_given: &str) -> Result<JobFilter, InvalidInput> {
    if filter == JobFilter::default() {
        return Err(InvalidInput::new("filter", none_given));
    }
    if let (Some(from), Some(until)) = (filter.from, filter.until) {
        if from >= until {
            return Err(InvalidInput::new("until", "must be after from"));
        }
    }
    Ok(filter)
}

/// A bulk job's filter as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobFilterView {
    pub tenant_id: Option<String>,
    pub reminder_id: Option<String>,
    pub destination_id: Option<String>,
    /// A replay's only.
    pub reason: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

/// What a bulk job does to each task it takes.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobActionView {
    /// Sends each failed task round again (`POST /v1/tasks/replay`).
    Replay,
    /// Cancels each task that has not ended (`POST /v1/tasks/cancel`).
    Cancel,
}

impl From<JobAction> for JobActionView {
    fn from(action: JobAction) -> Self {
        match action {
            JobAction::Replay => JobActionView::Replay,
            JobAction::Cancel => JobActionView::Cancel,
        }
    }
}

/// A bulk replay or cancel and its progress.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobView {
    #[schema(format = Uuid)]
    pub id: String,
    pub region: String,
    pub action: JobActionView,
    pub filter: JobFilterView,
    /// `bootstrap`, `cli`, or the id of the API token that asked; a
    /// cancel's tasks are recorded as cancelled by it.
    pub requested_by: String,
    /// The fresh retry horizon each replayed task gets, in seconds; `null`
    /// for a cancel.
    pub horizon_seconds: Option<i64>,
    /// A replay takes only tasks that had failed by then; a cancel only
    /// tasks scheduled by then.
    pub created_at: DateTime<Utc>,
    /// `running` until nothing is left to act on, then `finished`.
    pub state: &'static str,
    /// Tasks replayed so far (0 for a cancel).
    pub replayed: i64,
    /// Tasks cancelled so far, at once or after their attempt in flight
    /// (0 for a replay).
    pub cancelled: i64,
    pub finished_at: Option<DateTime<Utc>>,
}

impl From<&Job> for JobView {
    fn from(job: &Job) -> Self {
        let f = &job.filter;
        let replay = job.action == JobAction::Replay;
        Self {
            id: job.id.to_string(),
            region: job.region.to_string(),
            action: job.action.into(),
            filter: JobFilterView {
                tenant_id: f.tenant.as_ref().map(ToString::to_string),
                reminder_id: f.reminder.as_ref().map(ToString::to_string),
                destination_id: f.destination.as_ref().map(ToString::to_string),
                reason: f.reason.clone(),
                from: f.from,
                until: f.until,
            },
            requested_by: job.requested_by.clone(),
            horizon_seconds: replay.then(|| job.horizon.num_seconds()),
            created_at: job.created_at,
            state: if job.finished() {
                "finished"
            } else {
                "running"
            },
            replayed: if replay { job.replayed } else { 0 },
            cancelled: if replay { 0 } else { job.replayed },
            finished_at: job.finished_at,
        }
    }
}

/// Replay every failed task that matches
///
/// Records a bulk replay of this region's failed tasks that match the
/// filter and had failed by now; the region's processes work it to the
/// end in batches, each task as `POST /v1/tasks/{id}/replay` would send it
/// round again. Answers at once; `GET /v1/replays/{id}` reports progress.
#[utoipa::path(
    post,
    path = "/v1/tasks/replay",
    operation_id = "replay_tasks",
    tag = "tasks",
    request_body(content = ReplayRequest, content_type = "application/json"),
    responses(
        (status = 202, description = "Recorded; the job as it starts", body = JobView),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: ReplayRequest = read_object(utf8(&body)?)?;
    record(&state, &caller, JobAction::Replay, request.filter()?).await
}

/// The body as text.
fn utf8(body: &[u8]) -> Result<&str, ApiError> {
    std::str::from_utf8(body).map_err(|_| ApiError::BadRequest {
        field: None,
        message: "the body is not UTF-8".into(),
    })
}

/// Records the job, for this process's region, and answers it 202.
async fn record(
    state: &ApiState,
    caller: &super::caller::Caller,
    action: JobAction,
    filter: JobFilter,
) -> Result<HttpResponse, ApiError> {
    let job = state
        .acting(caller)
        .create_job(NewJob {
            region: state.rules.serving,
            action,
            filter,
            requested_by: caller.name(),
            horizon: state.rules.horizon,
        })
        .await?;
    Ok(HttpResponse::Accepted().json(JobView::from(&job)))
}

/// Cancel every task that matches
///
/// Records a bulk cancel of this region's tasks that match the filter,
/// were scheduled by now and have not ended; the region's processes work
/// it to the end in batches, each task as `POST /v1/tasks/{id}/cancel`
/// would cancel it: one `pending` or `retry_wait` ends `cancelled` at
/// once, one in flight after its attempt unless that attempt delivers it.
/// Answers at once; `GET /v1/replays/{id}` reports progress.
#[utoipa::path(
    post,
    path = "/v1/tasks/cancel",
    operation_id = "cancel_tasks",
    tag = "tasks",
    request_body(content = CancelRequest, content_type = "application/json"),
    responses(
        (status = 202, description = "Recorded; the job as it starts", body = JobView),
        (status = 400, description = "The body is not the JSON this endpoint takes (`reason` included: only a replay takes one)", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn cancel(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: CancelRequest = read_object(utf8(&body)?)?;
    record(&state, &caller, JobAction::Cancel, request.filter()?).await
}

/// A bulk replay's or cancel's progress
#[utoipa::path(
    get,
    path = "/v1/replays/{id}",
    operation_id = "get_replay",
    tag = "tasks",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses(
        (status = 200, description = "The job, its action and how far it has got", body = JobView),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such job in this region, or an id that is not a UUID", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<ApiState>,
    _admin: Admin,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let missing = || {
        ApiError::NotFound(format!(
            "no bulk job with id {}",
            remit::domain::quoted(&id)
        ))
    };
    let parsed = uuid::Uuid::parse_str(&id).map_err(|_| missing())?;
    match state.store.job(parsed).await? {
        Some(job) if job.region == state.rules.serving => {
            Ok(HttpResponse::Ok().json(JobView::from(&job)))
        }
        _ => Err(missing()),
    }
}
