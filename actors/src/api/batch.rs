//! POST /v1/tasks/batch: up to [`MAX_BATCH`] tasks in one request, each
//! answered with the status and body POST /v1/tasks would have given it
//! (201 created, 200 repeat, 409 conflict, 400 or 422 with the field, 413
//! for a payload over the limit, 403 naming `tenant_id` for a tenant the
//! token may not schedule for). One bad task never rejects its
//! neighbours, and a task is written whole or not at all.

use actix_web::{web, HttpResponse, ResponseError};
use remit::domain::{InvalidInput, NewTask, MAX_PAYLOAD_BYTES};
use remit::store::{Schedule, Scheduled, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::body::read_object;
use super::caller::Caller;
use super::error::ApiError;
use super::error::ErrorBody;
use super::state::ApiState;
use super::state::TaskRules;
use super::task_views::TaskSummary;
use super::tasks::{CreateTask, TraceparentHeader};
use crate::telemetry::RequestTrace;

/// Most tasks in one batch.
pub const MAX_BATCH: usize = 1_000;
/// Most bytes in one batch request.
pub const MAX_BATCH_BODY: usize = 16 * 1024 * 1024;

/// Up to 1,000 tasks, at most 16 MiB in all.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBatch {
    /// Each an object shaped like `CreateTask` (the body of `POST
    /// /v1/tasks`). Each is read and checked on its own and answered in
    /// its result, so a task that is not one (a 400 or 422 of its own)
    /// never rejects the request: the items are not constrained here.
    // Each read on its own, so a malformed one is that task's answer
    // rather than the whole request's.
    #[schema(value_type = Vec<Value>, max_items = 1000)]
    tasks: Vec<Box<RawValue>>,
}

/// One result per task, in the order of the request.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResults {
    pub results: Vec<BatchResult>,
}

/// What `POST /v1/tasks` would have answered for one task: its status
/// with the scheduled task, or its status with the error.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum BatchResult {
    Scheduled(BatchScheduled),
    Refused(BatchRefused),
}

/// A task scheduled (201) or repeated (200).
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchScheduled {
    /// 201 when created, 200 for a repeat.
    pub status: u16,
    #[serde(flatten)]
    pub task: TaskSummary,
}

/// A task refused, and not written.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchRefused {
    /// 400, 409, 413, 422 or 500.
    pub status: u16,
    #[serde(flatten)]
    pub body: ErrorBody,
}

impl BatchResult {
    fn scheduled(scheduled: &Scheduled) -> Self {
        Self::Scheduled(BatchScheduled {
            status: if scheduled.created { 201 } else { 200 },
            task: TaskSummary::from(&scheduled.task),
        })
    }

    /// The status and the error body a single request would have got.
    fn refused(error: &ApiError) -> Self {
        Self::Refused(BatchRefused {
            status: error.status_code().as_u16(),
            body: error.body(),
        })
    }
}

/// Schedule many webhooks at once
///
/// Each task is answered, in order, with the status and body
/// `POST /v1/tasks` would have given it. One bad task never rejects its
/// neighbours, and a task is written whole or not at all. When the
/// database fails while writing, the whole request answers 500 and
/// nothing is written; sending the same batch again is safe.
#[utoipa::path(
    post,
    path = "/v1/tasks/batch",
    operation_id = "create_tasks",
    tag = "tasks",
    request_body = CreateBatch,
    params(TraceparentHeader),
    responses(
        (status = 200, description = "One result per task, in order", body = BatchResults),
        (status = 400, description = "The body is not the JSON this endpoint takes", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token", body = ErrorBody,
            headers(("www-authenticate" = String, description = "`Bearer`"))),
        (status = 413, description = "The body is over 16 MiB", body = ErrorBody),
        (status = 422, description = "More than 1,000 tasks (`field` is `tasks`)", body = ErrorBody),
        (status = 500, description = "Internal error; nothing was written", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<ApiState>,
    caller: Caller,
    trace: RequestTrace,
    body: web::Json<Box<RawValue>>,
) -> Result<HttpResponse, ApiError> {
    let entries = read_object::<CreateBatch>(body.get())?.tasks;
    if entries.len() > MAX_BATCH {
        return Err(ApiError::Invalid(InvalidInput::new(
            "tasks",
            format!("at most {MAX_BATCH} tasks in one batch"),
        )));
    }
    // Per entry, its refusal, or None when it goes to the store.
    let mut refusals = Vec::with_capacity(entries.len());
    let mut batch = Vec::with_capacity(entries.len());
    for entry in &entries {
        match read(entry, &state.rules, &caller) {
            Ok((new, named)) => {
                batch.push((
                    NewTask {
                        traceparent: trace.0.clone(),
                        ..new
                    },
                    named,
                ));
                refusals.push(None);
            }
            Err(e) => refusals.push(Some(BatchResult::refused(&e))),
        }
    }
    state.horizons.apply(&state.store, &mut batch).await?;
    let batch = batch.into_iter().map(|(new, _)| new).collect();
    // A store failure is the whole request's: nothing was written.
    let mut answers = state.store.schedule_many(batch).await?.into_iter();
    let results = refusals
        .into_iter()
        .map(|refusal| match refusal {
            Some(refused) => refused,
            None => match answers.next() {
                Some(Ok(scheduled)) => BatchResult::scheduled(&scheduled),
                Some(Err(e)) => BatchResult::refused(&ApiError::from(e)),
                // `schedule_many` answers every task it is given, so this
                // never happens; were it to, the task was not scheduled.
                None => BatchResult::refused(&ApiError::Internal(StoreError::Thread(
                    "no answer for this task".into(),
                ))),
            },
        })
        .collect();
    Ok(HttpResponse::Ok().json(BatchResults { results }))
}

/// One task of the batch, read and checked as POST /v1/tasks would, and
/// whether it named its own horizon.
fn read(entry: &RawValue, rules: &TaskRules, caller: &Caller) -> Result<(NewTask, bool), ApiError> {
    let task: CreateTask = read_object(entry.get())?;
    if task.payload_len() > MAX_PAYLOAD_BYTES {
        return Err(ApiError::TooLarge {
            field: Some("payload"),
            limit: MAX_PAYLOAD_BYTES,
        });
    }
    let named = task.names_horizon();
    let new = task.validate(rules)?;
    caller.may_schedule_for(&new.tenant_id)?;
    Ok((new, named))
}
