//! The changes of `task_changes`, for the task a tenant's reminder names
//! (as the product that scheduled it knows it), and a tenant's erasure.

use actix_web::{web, HttpResponse};
use remit::domain::{ReminderId, TaskId, TenantId};
use remit::store::console::TaskFilter;
use remit::store::{Changes, Reports};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::caller::Admin;
use super::caller::Caller;
use super::error::ApiError;
use super::error::ErrorBody;
use super::state::ApiState;
use super::task_changes::{cancel_task, erase_task, reschedule_task, ChangeAnswer, RescheduleTask};

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
        (status = 403, description = "The token's scope does not allow this, or the task has ended (failed or cancelled) and the token is not an admin's", body = ErrorBody),
        (status = 404, description = "No such reminder in this region (or of the token's tenants)", body = ErrorBody),
        (status = 409, description = "The task is delivered, waits to be cancelled, was attempted in its ordering line, is in flight and a new payload was given, its payload was erased and no new one was given, or its destination was deleted", body = ErrorBody),
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
            .acting(&caller)
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
