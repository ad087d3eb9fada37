//! Changing a task after scheduling it, by its id: cancel it, move it
//! (with a new payload, if asked), erase its payload (`reminder_changes`
//! names the task by its tenant and reminder instead). A task in flight is never changed under its attempt: the
//! answer says the change waits for it (`after_attempt`).

use actix_web::{web, HttpResponse};
use remit::domain::{InvalidInput, Payload, Scope, TaskId, MAX_PAYLOAD_BYTES};
use remit::store::{why_not_moved, Cancel, Changes, Erase, Move, Reschedule, Schedule};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::read_object;
use super::caller::Caller;
use super::error::ApiError;
use super::error::ErrorBody;
use super::payload::RawPayload;
use super::state::ApiState;
use super::task_views::TaskView;
use super::tasks::{missing_task, own_task, parse_not_before, task_id};

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

    /// The change, every field checked; an error names the field. `revive`:
    /// whether the caller may bring an ended task back (the scope replay
    /// takes).
    pub fn validate(self, by: String, revive: bool) -> Result<Reschedule, InvalidInput> {
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
            revive,
        })
    }
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

pub(super) async fn cancel_task(
    state: &ApiState,
    caller: &Caller,
    id: TaskId,
) -> Result<HttpResponse, ApiError> {
    own_task(state, caller, id).await?;
    match state.acting(caller).cancel(id, &caller.name()).await? {
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

pub(super) async fn reschedule_task(
    state: &ApiState,
    caller: &Caller,
    id: TaskId,
    body: &RawValue,
) -> Result<HttpResponse, ApiError> {
    // Whose task it is first: another tenant's is answered as missing,
    // whatever the body.
    own_task(state, caller, id).await?;
    let change =
        read_object::<RescheduleTask>(body.get())?.validate(caller.name(), may_revive(caller))?;
    match state.acting(caller).reschedule(id, &change).await? {
        Move::Moved(task) => {
            state.stats.metrics.rescheduled();
            answer(state, ChangeOutcome::Moved, &task).await
        }
        Move::AfterAttempt(task) => answer(state, ChangeOutcome::AfterAttempt, &task).await,
        Move::NotFound => Err(missing_task(id)),
        refused => Err(not_moved(refused, change.payload.is_some())),
    }
}

/// Whether the caller may bring an ended task back with a reschedule: what
/// replay takes, the admin scope.
pub(super) fn may_revive(caller: &Caller) -> bool {
    caller.scope() == Scope::Admin
}

/// The answer to a reschedule that left the task as it was (any `Move`
/// but a move or a missing task).
pub(super) fn not_moved(refused: Move, new_payload: bool) -> ApiError {
    match refused {
        Move::Ended(task) => ApiError::Forbidden {
            field: None,
            message: format!(
                "task {} is {}; bringing it back with a fresh attempt budget is a replay, \
                 which takes the admin scope",
                task.id,
                task.state.as_str()
            ),
        },
        Move::DestinationDeleted(task) => ApiError::Conflict(format!(
            "task {} is not moved: its destination {} was deleted; schedule a new reminder \
             to a registered destination",
            task.id, task.destination_id
        )),
        Move::Refused(task) => ApiError::Conflict(format!(
            "task {} is not moved: {}",
            task.id,
            why_not_moved(&task, new_payload)
        )),
        Move::Moved(task) | Move::AfterAttempt(task) => ApiError::Conflict(format!(
            "task {} was moved meanwhile; read it again",
            task.id
        )),
        Move::NotFound => ApiError::Conflict("the task is gone; read it again".into()),
    }
}

pub(super) async fn erase_task(
    state: &ApiState,
    caller: &Caller,
    id: TaskId,
) -> Result<HttpResponse, ApiError> {
    own_task(state, caller, id).await?;
    match state.acting(caller).erase(id, &caller.name()).await? {
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
/// back `pending` with a fresh attempt budget, which is a replay: only for
/// an admin token (403 for others). A task in flight moves after its
/// attempt if that attempt does not end it (`after_attempt`). A task of a
/// deleted destination is never moved (409).
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
        (status = 403, description = "The token's scope does not allow this, or the task has ended (failed or cancelled) and the token is not an admin's", body = ErrorBody),
        (status = 404, description = "No such task in this region (or of the token's tenants), or an id that is not a UUID", body = ErrorBody),
        (status = 409, description = "The task is delivered, waits to be cancelled, was attempted in its ordering line, is in flight and a new payload was given, its payload was erased and no new one was given, or its destination was deleted", body = ErrorBody),
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
