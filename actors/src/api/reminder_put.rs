//! PUT /v1/tenants/{tenant_id}/reminders/{reminder_id}: "this reminder is
//! due at T with this payload", made true whatever it was before. A
//! source system that re-syncs its reminders sends each one as it stands:
//! one remit does not have is scheduled, one it has with the same content
//! is left alone, and one whose deadline or payload changed is moved (a
//! cancelled or failed one comes back). Its key stays the same throughout.

use actix_web::{web, HttpResponse};
use remit::domain::{TaskState, MAX_PAYLOAD_BYTES};
use remit::store::{Changes, Move, Reschedule, Schedule, StoreError};
use serde::Deserialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::read_object;
use super::caller::Caller;
use super::error::ApiError;
use super::error::ErrorBody;
use super::payload::RawPayload;
use super::reminder_changes::{reminder_task, ReminderPath};
use super::state::ApiState;
use super::task_changes::{answer, may_revive, not_moved, ChangeAnswer, ChangeOutcome};
use super::tasks::CreateTask;

/// What the reminder is to be: its destination, region, deadline, payload
/// and line, as `POST /v1/tasks` takes them; the tenant and reminder are
/// the path's.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"destination_id": "crm", "region": "us",
    "not_before": "2026-10-01T09:00:00Z", "payload": {"renewal": "2026-10-15"}}))]
pub struct PutReminder {
    #[schema(min_length = 1, max_length = 200)]
    destination_id: String,
    /// A region name: lowercase letters, digits and hyphens.
    #[schema(pattern = r"^[a-z][a-z0-9-]{0,31}$")]
    region: String,
    /// RFC 3339 with an offset.
    #[schema(format = DateTime)]
    not_before: String,
    /// Any JSON value, at most 1,048,576 bytes, kept byte for byte.
    #[schema(value_type = Value)]
    payload: RawPayload,
    /// The task's line, as `POST /v1/tasks` takes it; it cannot change.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200)]
    ordering_key: Option<String>,
}

/// Make a reminder due at a time with a payload
///
/// Schedules the reminder when remit does not have it (201, `created`);
/// answers 200 `unchanged` when it has it with this content; otherwise
/// moves it to this `not_before` with this payload, as
/// `POST /v1/tasks/{id}/reschedule` does (200, `moved` or `after_attempt`).
/// A delivered reminder whose content changed is 409: schedule a new
/// reminder id to send again. The destination, region and ordering key
/// cannot change (409 naming them).
#[utoipa::path(
    put,
    path = "/v1/tenants/{tenant_id}/reminders/{reminder_id}",
    operation_id = "put_reminder",
    tag = "tasks",
    params(
        ("tenant_id" = String, Path, description = "The tenant"),
        ("reminder_id" = String, Path, description = "The reminder"),
    ),
    request_body = PutReminder,
    responses(
        (status = 201, description = "Scheduled", body = ChangeAnswer),
        (status = 200, description = "Unchanged, moved, or moved after the attempt in flight", body = ChangeAnswer),
        (status = 400, description = "The body is not the JSON this endpoint takes; the error names the field", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 403, description = "The token's scope does not allow this, it may not schedule for this tenant, or the reminder has ended (failed or cancelled) and the token is not an admin's", body = ErrorBody),
        (status = 409, description = "Delivered with other content, waiting to be cancelled, or another destination, region or ordering key", body = ErrorBody),
        (status = 413, description = "The body is too large", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "A value was refused; `field` says which", body = ErrorBody),
        (status = 500, description = "Internal error", body = ErrorBody),
    ),
)]
pub async fn put(
    state: web::Data<ApiState>,
    caller: Caller,
    path: web::Path<ReminderPath>,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    let body: PutReminder = read_object(body.get())?;
    if body.payload.len() > MAX_PAYLOAD_BYTES {
        return Err(ApiError::TooLarge {
            field: Some("payload"),
            limit: MAX_PAYLOAD_BYTES,
        });
    }
    let (tenant, reminder) = path.ids();
    let request = CreateTask::from_raw(
        tenant.to_owned(),
        reminder.to_owned(),
        body.destination_id,
        body.region,
        body.not_before,
        body.payload,
    )
    .in_line(body.ordering_key);
    let new = request.validate(&state.rules)?;
    caller.may_schedule_for(&new.tenant_id)?;
    let mut one = [(new, false)];
    state.horizons.apply(&state.store, &mut one).await?;
    let [(new, _)] = one;
    let wanted = Reschedule {
        not_before: new.not_before,
        payload: Some(new.payload.clone()),
        by: caller.name(),
        revive: may_revive(&caller),
    };
    let existing = match state.store.schedule(new.clone()).await {
        Ok(scheduled) if scheduled.created => {
            return answer(&state, ChangeOutcome::Created, &scheduled.task)
                .await
                .map(|mut r| {
                    *r.status_mut() = actix_web::http::StatusCode::CREATED;
                    r
                });
        }
        Ok(scheduled) => return answer(&state, ChangeOutcome::Unchanged, &scheduled.task).await,
        Err(StoreError::Conflict { .. }) => {
            let id = reminder_task(&state, &caller, tenant, reminder)
                .await
                .map_err(|_| ApiError::Conflict("the reminder exists in another region".into()))?;
            state.store.task(id).await?.ok_or_else(|| {
                ApiError::Conflict("the reminder changed meanwhile; try again".into())
            })?
        }
        Err(e) => return Err(e.into()),
    };
    let mut fixed = Vec::new();
    if existing.destination_id != new.destination_id {
        fixed.push("destination_id");
    }
    if existing.region != new.region {
        fixed.push("region");
    }
    if existing.ordering_key != new.ordering_key {
        fixed.push("ordering_key");
    }
    if !fixed.is_empty() {
        return Err(ApiError::Conflict(format!(
            "the reminder exists with another {}, which cannot change; cancel it and schedule a new reminder",
            fixed.join(", ")
        )));
    }
    match state.acting(&caller).reschedule(existing.id, &wanted).await? {
        Move::Moved(task) => {
            state.stats.metrics.rescheduled();
            answer(&state, ChangeOutcome::Moved, &task).await
        }
        Move::AfterAttempt(task) => answer(&state, ChangeOutcome::AfterAttempt, &task).await,
        Move::Refused(task) if task.state == TaskState::Delivered => Err(ApiError::Conflict(
            format!(
                "task {} of this reminder was delivered with other content; schedule a new reminder id to send again",
                task.id
            ),
        )),
        Move::NotFound => Err(ApiError::Conflict(
            "the reminder changed meanwhile; try again".into(),
        )),
        refused => Err(not_moved(refused, true)),
    }
}
