//! A task as an export line carries it (its state, lease, times, payload
//! still sealed, and attempts), and back: every field checked on the way
//! in, naming the field at fault.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use remit::domain::{
    Attempt, AttemptOutcome, AttemptRecord, Cancellation, DestinationId, OrderingKey, Region,
    ReminderId, Task, TaskId, TaskState, TenantId, WaitingChange,
};
use remit::payload_crypto::SealedPayload;
use remit::store::TaskRecord;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskLine {
    id: uuid::Uuid,
    tenant_id: String,
    reminder_id: String,
    destination_id: String,
    region: String,
    state: String,
    not_before: DateTime<Utc>,
    available_at: DateTime<Utc>,
    retry_horizon_at: DateTime<Utc>,
    lease_token: Option<i64>,
    lease_owner: Option<String>,
    lease_expires_at: Option<DateTime<Utc>>,
    attempt_count: i32,
    attempts_before_replay: i32,
    idempotency_key: String,
    payload_ref: uuid::Uuid,
    last_status: Option<u16>,
    failure_reason: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    delivered_at: Option<DateTime<Utc>>,
    finalized_at: Option<DateTime<Utc>>,
    content_type: String,
    key_fingerprint: String,
    nonce: String,
    ciphertext: String,
    attempts: Vec<AttemptLine>,
    /// Absent for a task in no line, so files from before ordering keys
    /// read as they did; a remit that does not know the field refuses a
    /// file that has one rather than lose the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ordering_key: Option<String>,
    /// Who cancelled the task and when; absent when nobody did (so files
    /// from before cancels read as they did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cancelled_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cancelled_by: Option<String>,
    /// `cancel` or `move` (to `move_to`): a change waiting for the attempt
    /// in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    waiting_change: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    move_to: Option<DateTime<Utc>>,
    /// When the payload was erased: the line then carries no payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    payload_erased_at: Option<DateTime<Utc>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AttemptLine {
    attempt_number: i32,
    lease_token: i64,
    /// The lease owner, under the name export files have always used.
    #[serde(rename = "consumer_id")]
    lease_owner: String,
    outcome: String,
    started_at: Option<DateTime<Utc>>,
    received_at: Option<DateTime<Utc>>,
    http_status: Option<u16>,
    transport_error: Option<String>,
    retry_after_raw: Option<String>,
    retry_after_deadline: Option<DateTime<Utc>>,
    next_available_at: Option<DateTime<Utc>>,
    recorded_at: DateTime<Utc>,
}

pub(super) fn task_line(record: TaskRecord) -> TaskLine {
    let t = record.task;
    TaskLine {
        id: t.id.0,
        tenant_id: t.tenant_id.as_str().to_owned(),
        reminder_id: t.reminder_id.as_str().to_owned(),
        destination_id: t.destination_id.to_string(),
        region: t.region.to_string(),
        state: t.state.as_str().to_owned(),
        not_before: t.not_before,
        available_at: t.available_at,
        retry_horizon_at: t.retry_horizon_at,
        lease_token: t.lease_token,
        lease_owner: t.lease_owner,
        lease_expires_at: t.lease_expires_at,
        attempt_count: t.attempt_count,
        attempts_before_replay: t.attempts_before_replay,
        idempotency_key: t.idempotency_key,
        payload_ref: t.payload_ref,
        last_status: t.last_status,
        failure_reason: t.failure_reason,
        created_at: t.created_at,
        updated_at: t.updated_at,
        delivered_at: t.delivered_at,
        finalized_at: t.finalized_at,
        content_type: record.content_type,
        key_fingerprint: STANDARD.encode(&record.sealed.key_fingerprint),
        nonce: STANDARD.encode(&record.sealed.nonce),
        ciphertext: STANDARD.encode(&record.sealed.ciphertext),
        attempts: record
            .attempts
            .into_iter()
            .map(|a| AttemptLine {
                attempt_number: a.attempt_number,
                lease_token: a.lease_token,
                lease_owner: a.lease_owner,
                outcome: a.outcome.as_str().to_owned(),
                started_at: a.observed.started_at,
                received_at: a.observed.received_at,
                http_status: a.observed.http_status,
                transport_error: a.observed.transport_error,
                retry_after_raw: a.observed.retry_after_raw,
                retry_after_deadline: a.observed.retry_after_deadline,
                next_available_at: a.next_available_at,
                recorded_at: a.recorded_at,
            })
            .collect(),
        ordering_key: t.ordering_key.map(|k| k.as_str().to_owned()),
        cancelled_at: t.cancelled.as_ref().map(|c| c.at),
        cancelled_by: t.cancelled.map(|c| c.by),
        waiting_change: t.waiting_change.map(|c| c.label().to_owned()),
        move_to: t.waiting_change.and_then(|c| c.move_to()),
        payload_erased_at: t.payload_erased_at,
    }
}

pub(super) fn task_record(line: TaskLine) -> Result<TaskRecord, String> {
    let id = TaskId(line.id);
    let attempts = line
        .attempts
        .into_iter()
        .map(|a| {
            Ok(Attempt {
                task_id: id,
                attempt_number: a.attempt_number,
                lease_token: a.lease_token,
                lease_owner: a.lease_owner,
                outcome: outcome(&a.outcome)?,
                observed: AttemptRecord {
                    started_at: a.started_at,
                    received_at: a.received_at,
                    http_status: a.http_status,
                    transport_error: a.transport_error,
                    retry_after_raw: a.retry_after_raw,
                    retry_after_deadline: a.retry_after_deadline,
                },
                next_available_at: a.next_available_at,
                recorded_at: a.recorded_at,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(TaskRecord {
        task: Task {
            id,
            tenant_id: TenantId::new(&line.tenant_id).map_err(|e| e.to_string())?,
            reminder_id: ReminderId::new(&line.reminder_id).map_err(|e| e.to_string())?,
            destination_id: DestinationId::new(&line.destination_id).map_err(|e| e.to_string())?,
            region: line.region.parse::<Region>().map_err(|e| e.to_string())?,
            state: state(&line.state)?,
            not_before: line.not_before,
            available_at: line.available_at,
            retry_horizon_at: line.retry_horizon_at,
            lease_token: line.lease_token,
            lease_owner: line.lease_owner,
            lease_expires_at: line.lease_expires_at,
            attempt_count: line.attempt_count,
            attempts_before_replay: line.attempts_before_replay,
            idempotency_key: line.idempotency_key,
            payload_ref: line.payload_ref,
            last_status: line.last_status,
            failure_reason: line.failure_reason,
            created_at: line.created_at,
            updated_at: line.updated_at,
            delivered_at: line.delivered_at,
            finalized_at: line.finalized_at,
            ordering_key: line
                .ordering_key
                .map(|k| OrderingKey::new(&k))
                .transpose()
                .map_err(|e| e.to_string())?,
            // Not exported: a trace outlives neither the collector's
            // retention nor a move to another deployment.
            traceparent: None,
            cancelled: match (line.cancelled_at, line.cancelled_by) {
                (Some(at), Some(by)) => Some(Cancellation { at, by }),
                (None, None) => None,
                _ => return Err("cancelled_at and cancelled_by go together".into()),
            },
            waiting_change: WaitingChange::from_columns(
                line.waiting_change.as_deref(),
                line.move_to,
            )
            .ok_or("waiting_change must be cancel, or move with move_to")?,
            payload_erased_at: line.payload_erased_at,
        },
        content_type: line.content_type,
        sealed: SealedPayload {
            key_fingerprint: bytes("key_fingerprint", &line.key_fingerprint)?,
            nonce: bytes("nonce", &line.nonce)?,
            ciphertext: bytes("ciphertext", &line.ciphertext)?,
        },
        attempts,
    })
}

fn state(label: &str) -> Result<TaskState, String> {
    TaskState::from_label(label).ok_or_else(|| format!("state: unknown {label:?}"))
}

fn outcome(label: &str) -> Result<AttemptOutcome, String> {
    [
        AttemptOutcome::Delivered,
        AttemptOutcome::RetryWait,
        AttemptOutcome::Failed,
        AttemptOutcome::Fenced,
        AttemptOutcome::Abandoned,
    ]
    .into_iter()
    .find(|o| o.as_str() == label)
    .ok_or_else(|| format!("outcome: unknown {label:?}"))
}

/// Bytes a line carries in base64, named by `field` when they are not.
fn bytes(field: &str, text: &str) -> Result<Vec<u8>, String> {
    STANDARD
        .decode(text)
        .map_err(|e| format!("{field}: not base64 ({e})"))
}
