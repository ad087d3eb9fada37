//! POST /v1/tasks/batch: up to [`MAX_BATCH`] tasks in one request, each
//! answered with the status and body POST /v1/tasks would have given it
//! (201 created, 200 repeat, 409 conflict, 400 or 422 with the field, 413
//! for a payload over the limit). One bad task never rejects its
//! neighbours, and a task is written whole or not at all.

use actix_web::{web, HttpResponse, ResponseError};
use remit::domain::{InvalidInput, NewTask, MAX_PAYLOAD_BYTES};
use remit::store::Store;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::tasks::{summary, CreateTask, TaskRules};
use super::{ApiError, ApiState};

/// Most tasks in one batch.
pub const MAX_BATCH: usize = 1_000;
/// Most bytes in one batch request.
pub const MAX_BATCH_BODY: usize = 16 * 1024 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBatch {
    /// Each read on its own, so a malformed one is that task's answer.
    tasks: Vec<Box<RawValue>>,
}

pub async fn create(
    state: web::Data<ApiState>,
    body: web::Json<CreateBatch>,
) -> Result<HttpResponse, ApiError> {
    let entries = body.into_inner().tasks;
    if entries.len() > MAX_BATCH {
        return Err(ApiError::Invalid(InvalidInput::new(
            "tasks",
            format!("at most {MAX_BATCH} tasks in one batch"),
        )));
    }
    let mut results: Vec<Value> = vec![Value::Null; entries.len()];
    let mut positions = Vec::with_capacity(entries.len());
    let mut batch = Vec::with_capacity(entries.len());
    for (position, entry) in entries.iter().enumerate() {
        match read(entry, &state.rules) {
            Ok(new) => {
                positions.push(position);
                batch.push(new);
            }
            Err(e) => results[position] = answer_error(&e),
        }
    }
    // A store failure is the whole request's: nothing was written.
    let answers = state.store.schedule_many(batch).await?;
    for (position, answer) in positions.into_iter().zip(answers) {
        results[position] = match answer {
            Ok(scheduled) => {
                let status = if scheduled.created { 201 } else { 200 };
                let mut body = summary(&scheduled.task);
                body["status"] = json!(status);
                body
            }
            Err(e) => answer_error(&ApiError::from(e)),
        };
    }
    Ok(HttpResponse::Ok().json(json!({ "results": results })))
}

/// One task of the batch, read and checked as POST /v1/tasks would.
fn read(entry: &RawValue, rules: &TaskRules) -> Result<NewTask, ApiError> {
    let task: CreateTask =
        serde_json::from_str(entry.get()).map_err(|e| ApiError::bad_request(e.to_string()))?;
    if task.payload_len() > MAX_PAYLOAD_BYTES {
        return Err(ApiError::TooLarge {
            field: Some("payload"),
            limit: MAX_PAYLOAD_BYTES,
        });
    }
    Ok(task.validate(rules)?)
}

/// A task's error as its entry: the status and the error body a single
/// request would have got.
fn answer_error(error: &ApiError) -> Value {
    let mut body = error.body();
    body["status"] = json!(error.status_code().as_u16());
    body
}
