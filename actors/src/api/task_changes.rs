//! Changing a task after scheduling it: cancel it, move it (with a new
//! payload, if asked), erase its payload; by its id or by its tenant and
//! reminder, as the product that scheduled it knows it. And a tenant's
//! erasure. A task in flight is never changed under its attempt: the
//! answer says the change waits for it (`after_attempt`).

use actix_web::{web, HttpResponse};
use remit::domain::{InvalidInput, Payload, ReminderId, TaskId, TenantId, MAX_PAYLOAD_BYTES};
use remit::store::console::TaskFilter;
use remit::store::{why_not_moved, Cancel, Changes, Erase, Move, Reports, Reschedule, Store};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::read_object;
use super::error::ErrorBody;
use super::payload::RawPayload;
use super::task_views::TaskView;
use super::tasks::{missing_task, own_task, parse_not_before, task_id};
use super::{Admin, ApiError, ApiState, Caller};

/// What a change did, and the task as it stands after it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangeAnswer {
    pub outcome: ChangeOutcome,
    pub task: TaskView,
}

/// `created`: scheduled now. `unchanged`: it was as asked already.
/// `cancelled`: ended now. `already_cancelled`: it was, nothing changed.
/// `moved`: due at its new `not_before`. `after_attempt`: an attempt is in
/// flight and cannot be called back; if it delivers, the change lapses,
/// otherwise it is applied then and no other attempt is made before it.
/// `erased`: the payload is gone (and the task cancelled, or waiting to
/// be, if it had not ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeOutcome {
    Created,
    Unchanged,
    Cancelled,
    AlreadyCancelled,
    Moved,
    AfterAttempt,
    Erased,
}

/// A task's new deadline, and optionally its new payload.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"not_before": "2026-10-01T09:00:00Z",
    "payload": {"renewal": "2026-10-15"}}))]
pub struct RescheduleTask {
    /// The new deadline, RFC 3339 with an offset; earlier or later than
    /// the one it replaces. The retry horizon keeps its length from it.
    #[schema(format = DateTime)]
    not_before: String,
    /// Replaces the payload (any JSON value, at most 1,048,576 bytes, kept
    /// byte for byte); the idempotency key stays the same.
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
    payload: Option<RawPayload>,
}

impl RescheduleTask {
    /// A reschedule as the command line gives it: the payload is checked
    /// to be one JSON value.
    pub fn from_parts(
        not_before: String,
        payload_json: Option<String>,
    ) -> Result<Self, InvalidInput> {
        let payload = payload_json
            .map(|json| {
                RawPayload::parse(json).map_err(|e| {
                    InvalidInput::new("payload", format!("must be one JSON value ({e})"))
                })
            })
            .transpose()?;
        Ok(Self {
            not_before,
            payload,
        })
    }

    /// The change, every field checked; an error names the field.
    pub fn validate(self, by: String) -> Result<Reschedule, InvalidInput> {
        let not_before = parse_not_before(&self.not_before)?;
        let payload = match self.payload {
            Some(raw) if raw.len() > MAX_PAYLOAD_BYTES => {
                return Err(InvalidInput::new(
                    "payload",
                    format!("must be at most {MAX_PAYLOAD_BYTES} bytes"),
                ))
            }
            Some(raw) => Some(Payload::json(raw.as_bytes().to_vec())),
            None => None,
        };
        Ok(Reschedule {
            not_before,
            payload,
            by,
        })
    }
}

/// The task of `tenant`'s `reminder` in this region, if the caller may see
/// it: any other is answered as one that does not exist.
pub(super) async fn reminder_task(
    state: &ApiState,
    caller: &Caller,
    tenant: &str,
    reminder: &str,
) -> Result<TaskId, ApiError> {
    let missing = || {
        ApiError::NotFound(format!(
            "no task for tenant {} and reminder {}",
            remit::domain::quoted(tenant),
            remit::domain::quoted(reminder)
        ))
    };
    let (Ok(tenant), Ok(reminder)) = (TenantId::new(tenant), ReminderId::new(reminder)) else {
        return Err(missing());
    };
    if !caller.sees_tenant(&tenant) {
        return Err(missing());
    }
    let filter = TaskFilter {
        tenant: Some(tenant),
        reminder: Some(reminder),
        ..TaskFilter::default()
    };
    let page = state
        .store
        .search_tasks(state.rules.serving, &filter, None, 1)
        .await?;
    page.tasks.first().map(|t| t.id).ok_or_else(missing)
}

pub(super) async fn answer(
    state: &ApiState,
    outcome: ChangeOutcome,
    task: &remit::domain::Task,
) -> Result<HttpResponse, ApiError> {
    let attempts = state.store.attempts(task.id).await?;
    Ok(HttpResponse::Ok().json(ChangeAnswer {
        outcome,
        task: TaskView::new(task, &attempts),
    }))
}

async fn cancel_task(
    state: &ApiState,
    caller: &Caller,
    id: TaskId,
) -> Result<HttpResponse, ApiError> {
    own_task(state, caller, id).await?;
    match state.store.cancel(id, &caller.name()).await? {
        Cancel::Cancelled(task) => {
            state.stats.metrics.cancelled(1);
            answer(state, ChangeOutcome::Cancelled, &task).await
        }
        Cancel::AfterAttempt(task) => answer(state, ChangeOutcome::AfterAttempt, &task).await,
        Cancel::AlreadyCancelled(task) => {
            answer(state, ChangeOutcome::AlreadyCancelled, &task).await
        }
        Cancel::Ended(task) => Err(ApiError::Conflict(format!(
            "task {id} is {}; only a task that has not ended can be cancelled",
            task.state.as_str()
        ))),
        Cancel::NotFound => Err(missing_task(id)),
    }
}

async fn reschedule_task(
    state: &ApiState,
    caller: &Caller,
    id: TaskId,
    body: &RawValue,
) -> Result<HttpResponse, ApiError> {
    // Whose task it is first: another tenant's is answered as missing,
    // whatever the body.
    own_task(state, caller, id).await?;
    let change = read_object::<RescheduleTask>(body.get())?.validate(caller.name())?;
    match state.store.reschedule(id, &change).await? {
        Move::Moved(task) => {
            state.stats.metrics.rescheduled();
            answer(state, ChangeOutcome::Moved, &task).await
        }
        Move::AfterAttempt(task) => answer(state, ChangeOutcome::AfterAttempt, &task).await,
        Move::Refused(task) => Err(ApiError::Conflict(format!(
            "task {id} is not moved: {}",
            why_not_moved(&task, change.payload.is_some())
        ))),
        Move::NotFound => Err(missing_task(id)),
    }
}

async fn erase_task(
    state: &ApiState,
    caller: &Caller,
    id: TaskId,
) -> Result<HttpResponse, ApiError> {
    own_task(state, caller, id).await?;
    match state.store.erase(id, &caller.name()).await? {
        Erase::Erased(task) => {
            state.stats.metrics.erased(1);
            answer(state, ChangeOutcome::Erased, &task).await
        }
        Erase::NotFound => Err(missing_task(id)),
    }
}

const TASK_ID: &str = "The task's id";

/// Cancel a task that has not ended
///
/// A task not in flight ends `cancelled` at once and is never sent. One in
/// flight cannot be called back: its attempt finishes, and if it does not
/// deliver, the task ends `cancelled` with no other attempt
/// (`after_attempt`). Cancelling a cancelled task again answers 200 with
/// `already_cancelled`; a delivered or failed one is 409. No body.
#[utoipa::path(
    post,
    path = "/v1/tasks/{id}/cancel",
    operation_id = "cancel_task",
    tag = "tasks",
    params(("id" = String, Path, format = Uuid, description = TASK_ID)),
    responses(
        (status = 200, description = "Cancelled, already cancelled, or cancelled after the attempt in flight", body = ChangeAnswer),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "No such task in this region (or of the token's tenants), or an id that is not a UUID", body = ErrorBody),
        (status = 409, description = "The task is delivered or failed", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn cancel(
    state: web::Data<ApiState>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    cancel_task(&state, &caller, task_id(&id)?).await
}

/// Move a task that has not been delivered
///
/// The task becomes due at the new `not_before` (earlier or later), with
/// its retry horizon as long as before and the same idempotency key; with
/// `payload`, the payload is replaced. A failed or cancelled task comes
/// back `pending` with a fresh attempt budget. A task in flight moves
/// after its attempt if that attempt does not deliver (`after_attempt`).
#[utoipa::path(
    post,
    path = "/v1/tasks/{id}/reschedule",
    operation_id = "reschedule_task",
    tag = "tasks",
    params(("id" = String, Path, format = Uuid, description = TASK_ID)),
    request_body = RescheduleTask,
    responses(
        (status = 200, description = "Moved, or moved after the attempt in flight", body = ChangeAnswer),
        (status = 400, description = "The body is not the JSON this endpoint takes; the error names the field", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "No such task in this region (or of the token's tenants), or an id that is not a UUID", body = ErrorBody),
        (status = 409, description = "The task is delivered, waits to be cancelled, was attempted in its ordering line, is in flight and a new payload was given, or its payload was erased and no new one was given", body = ErrorBody),
        (status = 413, description = "The body is too large", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn reschedule(
    state: web::Data<ApiState>,
    caller: Caller,
    id: web::Path<String>,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    reschedule_task(&state, &caller, task_id(&id)?, &body).await
}

/// Erase a task's payload
///
/// The payload's sealed bytes leave the database now (and every later
/// export); the task and its attempt log stay, with `payload_erased_at`.
/// A task that has not ended is cancelled by it (after its attempt in
/// flight, if there is one). Erasing again answers the same. No body.
#[utoipa::path(
    post,
    path = "/v1/tasks/{id}/erase",
    operation_id = "erase_task",
    tag = "tasks",
    params(("id" = String, Path, format = Uuid, description = TASK_ID)),
    responses(
        (status = 200, description = "The payload is erased", body = ChangeAnswer),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "No such task in this region (or of the token's tenants), or an id that is not a UUID", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn erase(
    state: web::Data<ApiState>,
    caller: Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    erase_task(&state, &caller, task_id(&id)?).await
}

/// A tenant's reminder, as a path names it.
#[derive(Debug, Deserialize)]
pub struct ReminderPath {
    tenant_id: String,
    reminder_id: String,
}

impl ReminderPath {
    /// The tenant and the reminder, as given.
    pub fn ids(&self) -> (&str, &str) {
        (&self.tenant_id, &self.reminder_id)
    }
}

/// Cancel a reminder, by its tenant and reminder id
///
/// As `POST /v1/tasks/{id}/cancel`, for the task scheduled under this
/// tenant and reminder.
#[utoipa::path(
    post,
    path = "/v1/tenants/{tenant_id}/reminders/{reminder_id}/cancel",
    operation_id = "cancel_reminder",
    tag = "tasks",
    params(
        ("tenant_id" = String, Path, description = "The tenant, as scheduled"),
        ("reminder_id" = String, Path, description = "The reminder, as scheduled"),
    ),
    responses(
        (status = 200, description = "Cancelled, already cancelled, or cancelled after the attempt in flight", body = ChangeAnswer),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "No such reminder in this region (or of the token's tenants)", body = ErrorBody),
        (status = 409, description = "The task is delivered or failed", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn cancel_reminder(
    state: web::Data<ApiState>,
    caller: Caller,
    path: web::Path<ReminderPath>,
) -> Result<HttpResponse, ApiError> {
    let id = reminder_task(&state, &caller, &path.tenant_id, &path.reminder_id).await?;
    cancel_task(&state, &caller, id).await
}

/// Move a reminder, by its tenant and reminder id
///
/// As `POST /v1/tasks/{id}/reschedule`, for the task scheduled under this
/// tenant and reminder.
#[utoipa::path(
    post,
    path = "/v1/tenants/{tenant_id}/reminders/{reminder_id}/reschedule",
    operation_id = "reschedule_reminder",
    tag = "tasks",
    params(
        ("tenant_id" = String, Path, description = "The tenant, as scheduled"),
        ("reminder_id" = String, Path, description = "The reminder, as scheduled"),
    ),
    request_body = RescheduleTask,
    responses(
        (status = 200, description = "Moved, or moved after the attempt in flight", body = ChangeAnswer),
        (status = 400, description = "The body is not the JSON this endpoint takes; the error names the field", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "No such reminder in this region (or of the token's tenants)", body = ErrorBody),
        (status = 409, description = "The task is delivered, waits to be cancelled, was attempted in its ordering line, is in flight and a new payload was given, or its payload was erased and no new one was given", body = ErrorBody),
        (status = 413, description = "The body is too large", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn reschedule_reminder(
    state: web::Data<ApiState>,
    caller: Caller,
    path: web::Path<ReminderPath>,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    let id = reminder_task(&state, &caller, &path.tenant_id, &path.reminder_id).await?;
    reschedule_task(&state, &caller, id, &body).await
}

/// Erase a reminder's payload, by its tenant and reminder id
///
/// As `POST /v1/tasks/{id}/erase`, for the task scheduled under this
/// tenant and reminder.
#[utoipa::path(
    post,
    path = "/v1/tenants/{tenant_id}/reminders/{reminder_id}/erase",
    operation_id = "erase_reminder",
    tag = "tasks",
    params(
        ("tenant_id" = String, Path, description = "The tenant, as scheduled"),
        ("reminder_id" = String, Path, description = "The reminder, as scheduled"),
    ),
    responses(
        (status = 200, description = "The payload is erased", body = ChangeAnswer),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "No such reminder in this region (or of the token's tenants)", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn erase_reminder(
    state: web::Data<ApiState>,
    caller: Caller,
    path: web::Path<ReminderPath>,
) -> Result<HttpResponse, ApiError> {
    let id = reminder_task(&state, &caller, &path.tenant_id, &path.reminder_id).await?;
    erase_task(&state, &caller, id).await
}

/// What a tenant's erasure did.
#[derive(Debug, Serialize, ToSchema)]
pub struct TenantErased {
    /// Payloads erased now.
    pub erased: u64,
    /// Of those, tasks that had not ended: cancelled now, or once their
    /// attempt in flight ends.
    pub cancelled: u64,
}

/// How many tasks one transaction of a tenant's erasure takes.
const ERASE_BATCH: u32 = 500;

/// Erase every payload of a tenant
///
/// Every task of the tenant (in every region: payloads are erased
/// wherever they are) loses its payload, and each that has not ended is
/// cancelled, in transactions of 500 tasks until none is left. Admin only.
#[utoipa::path(
    post,
    path = "/v1/tenants/{tenant_id}/erase",
    operation_id = "erase_tenant",
    tag = "tasks",
    params(("tenant_id" = String, Path, description = "The tenant")),
    responses(
        (status = 200, description = "Every payload of the tenant is erased", body = TenantErased),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this", body = ErrorBody),
        (status = 404, description = "A tenant id remit could never have stored", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn erase_tenant(
    state: web::Data<ApiState>,
    Admin(caller): Admin,
    tenant: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let tenant = TenantId::new(&tenant)
        .map_err(|_| ApiError::NotFound(format!("no tenant {}", remit::domain::quoted(&tenant))))?;
    let mut total = TenantErased {
        erased: 0,
        cancelled: 0,
    };
    loop {
        let round = state
            .store
            .erase_tenant(&tenant, &caller.name(), ERASE_BATCH)
            .await?;
        total.erased += round.erased;
        total.cancelled += round.cancelled;
        state.stats.metrics.erased(round.erased);
        state.stats.metrics.cancelled(round.cancelled);
        if round.erased < u64::from(ERASE_BATCH) {
            break;
        }
    }
    Ok(HttpResponse::Ok().json(total))
}
