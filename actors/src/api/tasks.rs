//! /v1/tasks: schedule, inspect and replay logical webhooks.

use actix_web::{web, HttpResponse};
use remit::domain::{
    DestinationId, InvalidInput, NewTask, OrderingKey, Payload, Region, ReminderId, Task, TaskId,
    TenantId, MAX_PAYLOAD_BYTES,
};
use remit::store::{Replayed, Schedule};
use serde::Deserialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::read_object;
use super::caller::Admin;
use super::caller::Caller;
use super::error::ApiError;
use super::error::ErrorBody;
use super::payload::RawPayload;
use super::state::{ApiState, TaskRules};
pub(super) use super::task_times::parse_not_before;
pub use super::task_times::{WholeSeconds, MAX_HORIZON_SECONDS};
use super::task_views::{TaskSummary, TaskView};
use crate::telemetry::RequestTrace;

/// One logical webhook to schedule. `tenant_id` and `reminder_id` together
/// identify it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "tenant_id": "clinic-1", "reminder_id": "renewal-42", "destination_id": "crm",
    "region": "us", "not_before": "2026-08-13T09:00:00Z",
    "payload": {"renewal": "2026-09-01"}, "retry_horizon_seconds": 86400
}))]
pub struct CreateTask {
    /// Not blank, at most 200 bytes (UTF-8), no control characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    )]
    tenant_id: String,
    /// Not blank, at most 200 bytes (UTF-8), no control characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    )]
    reminder_id: String,
    /// A registered destination in `region`; an id as `POST
    /// /v1/destinations` takes it.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    )]
    destination_id: String,
    /// This process's region, unless it accepts tasks for other regions: a
    /// lowercase letter, then up to 31 lowercase letters, digits or `-`.
    #[schema(pattern = r"^[a-z][a-z0-9-]{0,31}$", max_length = 32)]
    region: String,
    /// RFC 3339 with an offset, e.g. 2026-08-13T09:00:00Z, from
    /// 0001-01-01T00:00:00Z to 9989-12-31T23:59:59Z in UTC, so that the
    /// retry horizon's end stays within year 9999. Never sent before it; a
    /// time in the past makes the task due at once.
    #[schema(format = DateTime)]
    not_before: String,
    /// Any JSON value, at most 1,048,576 bytes; stored and sent byte for
    /// byte as the client wrote it, as the request body,
    /// `application/json`.
    #[schema(value_type = Value)]
    payload: RawPayload,
    /// How long after `not_before` retries may start, in whole seconds, at
    /// most 315,360,000 (ten years); the configured horizon when absent. A
    /// number with no fraction (`86400.0`, `8.64e4`) counts as that
    /// integer, as JSON Schema counts it.
    #[serde(default)]
    #[schema(value_type = Option<u64>, minimum = 0, maximum = 315_360_000)]
    retry_horizon_seconds: Option<WholeSeconds>,
    /// Tasks of the same `destination_id` and `ordering_key` are sent one
    /// at a time, in order of `not_before`, then of scheduling; one waiting
    /// on a retry holds those behind it. Absent for no order. Not blank, at
    /// most 200 bytes (UTF-8), no control characters.
    #[serde(default)]
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    )]
    ordering_key: Option<String>,
}

impl CreateTask {
    /// A request from its parts, the payload already checked to be one
    /// JSON value.
    pub(super) fn from_raw(
        tenant_id: String,
        reminder_id: String,
        destination_id: String,
        region: String,
        not_before: String,
        payload: RawPayload,
    ) -> Self {
        Self {
            tenant_id,
            reminder_id,
            destination_id,
            region,
            not_before,
            payload,
            retry_horizon_seconds: None,
            ordering_key: None,
        }
    }

    /// A request from the command line's flags.
    pub fn from_parts(
        tenant_id: String,
        reminder_id: String,
        destination_id: String,
        region: String,
        not_before: String,
        payload_json: &str,
    ) -> Result<Self, InvalidInput> {
        let payload = RawPayload::parse(payload_json.to_owned())
            .map_err(|e| InvalidInput::new("payload", format!("must be one JSON value ({e})")))?;
        Ok(Self::from_raw(
            tenant_id,
            reminder_id,
            destination_id,
            region,
            not_before,
            payload,
        ))
    }

    /// The same request, in the line `ordering_key` names (the command
    /// line's `--ordering-key`).
    pub fn in_line(self, ordering_key: Option<String>) -> Self {
        Self {
            ordering_key,
            ..self
        }
    }

    /// Whether it names its own retry horizon (else its destination's, or
    /// the runtime's, applies).
    pub fn names_horizon(&self) -> bool {
        self.retry_horizon_seconds.is_some()
    }

    /// The payload's size in bytes, as sent.
    pub fn payload_len(&self) -> usize {
        self.payload.len()
    }

    pub fn validate(self, rules: &TaskRules) -> Result<NewTask, InvalidInput> {
        let region: Region = self.region.parse()?;
        if region != rules.serving && !rules.allow_other_regions {
            return Err(InvalidInput::new(
                "region",
                format!(
                    "this process serves region {}; tasks for {} go to that region's process",
                    remit::domain::quoted(rules.serving.as_str()),
                    remit::domain::quoted(region.as_str())
                ),
            ));
        }
        let not_before = parse_not_before(&self.not_before)?;
        let retry_horizon = match self.retry_horizon_seconds {
            None => rules.horizon,
            Some(WholeSeconds(s)) => i64::try_from(s)
                .ok()
                .filter(|_| s <= MAX_HORIZON_SECONDS)
                .map(chrono::Duration::seconds)
                .ok_or_else(|| {
                    InvalidInput::new(
                        "retry_horizon_seconds",
                        format!("must be at most {MAX_HORIZON_SECONDS} (ten years)"),
                    )
                })?,
        };
        let body = self.payload.as_bytes().to_vec();
        if body.len() > MAX_PAYLOAD_BYTES {
            return Err(InvalidInput::new(
                "payload",
                format!("must be at most {MAX_PAYLOAD_BYTES} bytes"),
            ));
        }
        Ok(NewTask {
            tenant_id: TenantId::new(&self.tenant_id)?,
            reminder_id: ReminderId::new(&self.reminder_id)?,
            destination_id: DestinationId::new(&self.destination_id)?,
            region,
            not_before,
            retry_horizon,
            payload: Payload::json(body),
            ordering_key: self
                .ordering_key
                .as_deref()
                .map(OrderingKey::new)
                .transpose()?,
            traceparent: None,
        })
    }
}

/// The W3C Trace Context header a scheduling request may carry.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)] // read by the tracing middleware, described here
pub struct TraceparentHeader {
    /// The caller's span, `00-<32 hex trace id>-<16 hex parent id>-<2 hex
    /// flags>` (W3C Trace Context, version 00, lowercase). When tracing is
    /// on, the request's span is its child, the task keeps the request's
    /// span, and every attempt of the task is traced as a child of it and
    /// sends its own `traceparent` to the receiver. A header that is not
    /// valid is ignored (a new trace starts), never refused.
    #[param(required = false)]
    traceparent: String,
}

/// Schedule a webhook
///
/// The same request again (same ids, `destination_id`, `region`,
/// `not_before` to the microsecond, `payload` and `ordering_key`) answers
/// 200 with the existing task; the same ids with other content answer 409.
#[utoipa::path(
    post,
    path = "/v1/tasks",
    operation_id = "create_task",
    tag = "tasks",
    request_body = CreateTask,
    params(TraceparentHeader),
    responses(
        (status = 201, description = "Scheduled", body = TaskSummary),
        (status = 200, description = "A repeat of an earlier request: the existing task", body = TaskSummary),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 409, description = "The ids exist with other content", body = ErrorBody),
        (status = 413, description = "The body or the payload is over its limit", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<ApiState>,
    caller: Caller,
    trace: RequestTrace,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    // The bearer token has been checked before the body was read (see
    // `auth::require_token`).
    let body: CreateTask = read_object(body.get())?;
    if body.payload_len() > MAX_PAYLOAD_BYTES {
        return Err(ApiError::TooLarge {
            field: Some("payload"),
            limit: MAX_PAYLOAD_BYTES,
        });
    }
    let named = body.names_horizon();
    let mut new = body.validate(&state.rules)?;
    caller.may_schedule_for(&new.tenant_id)?;
    new.traceparent = trace.0;
    let mut one = [(new, named)];
    state.horizons.apply(&state.store, &mut one).await?;
    let [(new, _)] = one;
    let scheduled = state.store.schedule(new).await?;
    let summary = TaskSummary::from(&scheduled.task);
    Ok(if scheduled.created {
        HttpResponse::Created().json(summary)
    } else {
        HttpResponse::Ok().json(summary)
    })
}

pub(super) fn task_id(raw: &str) -> Result<TaskId, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(TaskId)
        .map_err(|_| ApiError::NotFound(format!("no task with id {}", remit::domain::quoted(raw))))
}

/// The task, when it exists and belongs to this process's region. Another
/// region's task is answered exactly like a missing one, so one region's
/// API reveals nothing about another's (not even that the id exists).
/// The task, if it is this region's and the caller may see its tenant:
/// any other is answered exactly as one that does not exist.
pub(super) async fn own_task(
    state: &ApiState,
    caller: &Caller,
    id: TaskId,
) -> Result<Task, ApiError> {
    state
        .store
        .task(id)
        .await?
        .filter(|task| task.region == state.rules.serving && caller.sees_tenant(&task.tenant_id))
        .ok_or_else(|| missing_task(id))
}

pub(super) fn missing_task(id: TaskId) -> ApiError {
    ApiError::NotFound(format!("no task with id {id}"))
}

/// Read a task and its attempt log
///
/// The attempt log is oldest first. The payload is never returned.
#[utoipa::path(
    get,
    path = "/v1/tasks/{id}",
    operation_id = "get_task",
    tag = "tasks",
    params(("id" = String, Path, format = Uuid, description = "The task's id")),
    responses(
        (status = 200, description = "The task", body = TaskView),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such task in this region, or an id that is not a UUID", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<ApiState>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = task_id(&id)?;
    let task = own_task(&state, &caller, id).await?;
    let attempts = state.store.attempts(id).await?;
    Ok(HttpResponse::Ok().json(TaskView::new(&task, &attempts)))
}

/// Send a failed task round again
///
/// The task goes back to `pending` with a fresh retry horizon and a fresh
/// attempt budget; attempt numbers keep rising and the idempotency key
/// stays the same. No body is needed.
#[utoipa::path(
    post,
    path = "/v1/tasks/{id}/replay",
    operation_id = "replay_task",
    tag = "tasks",
    params(("id" = String, Path, format = Uuid, description = "The task's id")),
    responses(
        (status = 200, description = "The task, back to `pending`", body = TaskView),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 404, description = "No such task in this region, or an id that is not a UUID", body = ErrorBody),
        (status = 409, description = "The task is not `failed`, or its payload was erased", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn replay(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // Only this region's tasks: a task never changes region, so the check
    // cannot go stale before the replay.
    let id = task_id(&id)?;
    own_task(&state, &caller, id).await?;
    match state
        .acting(&caller)
        .replay(id, state.rules.horizon)
        .await?
    {
        Replayed::Replayed(task) => {
            let attempts = state.store.attempts(id).await?;
            Ok(HttpResponse::Ok().json(TaskView::new(&task, &attempts)))
        }
        Replayed::NotFailed(task) if task.payload_erased_at.is_some() => Err(ApiError::Conflict(
            format!("the payload of task {id} was erased; reschedule it with a new payload"),
        )),
        // Failed, its payload there, and not replayed: its destination was
        // deleted.
        Replayed::NotFailed(task) if task.state == remit::domain::TaskState::Failed => {
            Err(ApiError::Conflict(format!(
                "task {id} is not replayed: its destination {} was deleted",
                task.destination_id
            )))
        }
        Replayed::NotFailed(task) => Err(ApiError::Conflict(format!(
            "task {id} is {}; only a failed task can be replayed",
            task.state.as_str()
        ))),
        Replayed::NotFound => Err(missing_task(id)),
    }
}
