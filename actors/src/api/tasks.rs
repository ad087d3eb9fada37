//! /v1/tasks: schedule, inspect and replay logical webhooks.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use remit::domain::{
    Attempt, DestinationId, InvalidInput, NewTask, Payload, Region, ReminderId, Task, TaskId,
    TenantId, MAX_PAYLOAD_BYTES,
};
use remit::store::{Replayed, Store};
use serde::Deserialize;
use serde_json::{json, Value};

use super::payload::RawPayload;
use super::{ApiError, ApiState};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTask {
    tenant_id: String,
    reminder_id: String,
    destination_id: String,
    region: String,
    /// RFC 3339 with an offset, e.g. 2026-08-13T09:00:00Z.
    not_before: String,
    /// Any JSON value; stored and sent byte for byte as the client wrote
    /// it, as the request body, `application/json`.
    payload: RawPayload,
    /// How long after `not_before` retries may start; the configured
    /// horizon when absent.
    retry_horizon_seconds: Option<u64>,
}

/// Where tasks may be accepted and the default horizon.
#[derive(Debug, Clone, Copy)]
pub struct TaskRules {
    /// The region of the accepting process.
    pub serving: Region,
    pub allow_other_regions: bool,
    pub horizon: chrono::Duration,
}

impl CreateTask {
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
        Ok(Self {
            tenant_id,
            reminder_id,
            destination_id,
            region,
            not_before,
            payload,
            retry_horizon_seconds: None,
        })
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
                    "this process serves region {:?}; tasks for {:?} go to that region's process",
                    rules.serving.as_str(),
                    region.as_str()
                ),
            ));
        }
        let not_before = DateTime::parse_from_rfc3339(&self.not_before)
            .map_err(|e| {
                InvalidInput::new(
                    "not_before",
                    format!("must be RFC 3339 with an offset, e.g. 2026-08-13T09:00:00Z ({e})"),
                )
            })?
            .with_timezone(&Utc);
        let retry_horizon = match self.retry_horizon_seconds {
            None => rules.horizon,
            Some(s) => i64::try_from(s)
                .ok()
                .and_then(chrono::Duration::try_seconds)
                .ok_or_else(|| InvalidInput::new("retry_horizon_seconds", "is too large"))?,
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
        })
    }
}

/// The bearer token has been checked before the body is read (see
/// `auth::require_token`).
pub async fn create(
    state: web::Data<ApiState>,
    body: web::Json<CreateTask>,
) -> Result<HttpResponse, ApiError> {
    if body.payload_len() > MAX_PAYLOAD_BYTES {
        return Err(ApiError::TooLarge {
            field: Some("payload"),
            limit: MAX_PAYLOAD_BYTES,
        });
    }
    let new = body.into_inner().validate(&state.rules)?;
    let scheduled = state.store.schedule(new).await?;
    let summary = summary(&scheduled.task);
    Ok(if scheduled.created {
        HttpResponse::Created().json(summary)
    } else {
        HttpResponse::Ok().json(summary)
    })
}

/// What scheduling answers about a task.
pub fn summary(task: &Task) -> Value {
    json!({
        "id": task.id.to_string(),
        "idempotency_key": task.idempotency_key,
        "state": task.state.as_str(),
    })
}

fn task_id(raw: &str) -> Result<TaskId, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(TaskId)
        .map_err(|_| ApiError::NotFound(format!("no task with id {raw:?}")))
}

/// The task, when it exists and belongs to this process's region. Another
/// region's task is answered exactly like a missing one, so one region's
/// API reveals nothing about another's (not even that the id exists).
async fn own_task(state: &ApiState, id: TaskId) -> Result<Task, ApiError> {
    state
        .store
        .task(id)
        .await?
        .filter(|task| task.region == state.rules.serving)
        .ok_or_else(|| missing_task(id))
}

fn missing_task(id: TaskId) -> ApiError {
    ApiError::NotFound(format!("no task with id {id}"))
}

pub async fn get(
    state: web::Data<ApiState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = task_id(&id)?;
    let task = own_task(&state, id).await?;
    let attempts = state.store.attempts(id).await?;
    Ok(HttpResponse::Ok().json(task_json(&task, &attempts)))
}

/// Replays only this region's tasks (a task never changes region, so the
/// check cannot go stale before the replay).
pub async fn replay(
    state: web::Data<ApiState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = task_id(&id)?;
    own_task(&state, id).await?;
    match state.store.replay(id, state.rules.horizon).await? {
        Replayed::Replayed(task) => Ok(HttpResponse::Ok().json(task_json(&task, &[]))),
        Replayed::NotFailed(task) => Err(ApiError::Conflict(format!(
            "task {id} is {}; only a failed task can be replayed",
            task.state.as_str()
        ))),
        Replayed::NotFound => Err(missing_task(id)),
    }
}

fn task_json(task: &Task, attempts: &[Attempt]) -> Value {
    json!({
        "id": task.id.to_string(),
        "tenant_id": task.tenant_id.as_str(),
        "reminder_id": task.reminder_id.as_str(),
        "destination_id": task.destination_id.as_str(),
        "region": task.region.as_str(),
        "state": task.state.as_str(),
        "idempotency_key": task.idempotency_key,
        "not_before": task.not_before,
        "available_at": task.available_at,
        "retry_horizon_at": task.retry_horizon_at,
        "attempt_count": task.attempt_count,
        "lease_owner": task.lease_owner,
        "lease_expires_at": task.lease_expires_at,
        "last_status": task.last_status,
        "failure_reason": task.failure_reason,
        "created_at": task.created_at,
        "updated_at": task.updated_at,
        "delivered_at": task.delivered_at,
        "finalized_at": task.finalized_at,
        "attempts": attempts.iter().map(|a| json!({
            "attempt_number": a.attempt_number,
            "outcome": a.outcome.as_str(),
            "consumer_id": a.consumer_id,
            "lease_token": a.lease_token,
            "started_at": a.observed.started_at,
            "received_at": a.observed.received_at,
            "http_status": a.observed.http_status,
            "transport_error": a.observed.transport_error,
            "retry_after_raw": a.observed.retry_after_raw,
            "retry_after_deadline": a.observed.retry_after_deadline,
            "next_available_at": a.next_available_at,
            "recorded_at": a.recorded_at,
        })).collect::<Vec<_>>(),
    })
}
