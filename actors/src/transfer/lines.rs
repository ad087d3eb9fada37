//! The export file's lines as serde reads and writes them, and how each
//! converts to and from the store's records. Every field is checked on
//! the way in, naming the field at fault.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use remit::domain::{
    Attempt, AttemptOutcome, AttemptRecord, Cancellation, Destination, DestinationHealth,
    DestinationId, DestinationSettings, DisableOverrides, OrderingKey, Region, ReminderId, Task,
    TaskId, TaskState, TenantId, WaitingChange,
};
use remit::payload_crypto::SealedPayload;
use remit::store::{DestinationRecord, HeaderRecord, SecretRecord, StoredValue, TaskRecord};
use serde::{Deserialize, Serialize};

use super::header_lines;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum Line {
    Header { format: String },
    Destination(Box<DestinationLine>),
    Task(Box<TaskLine>),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DestinationLine {
    id: String,
    region: String,
    url: String,
    /// A secret in clear, as files written before secrets were sealed
    /// carry it: imported in clear and sealed at the next start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signing_secret: Option<String>,
    /// Every secret, sealed under the payload key (base64 parts).
    #[serde(default)]
    signing_secrets: Vec<SecretLine>,
    enabled: bool,
    paused_until: Option<DateTime<Utc>>,
    rate_tokens: Option<f64>,
    rate_refilled_at: Option<DateTime<Utc>>,
    /// The destination's health (absent in a file from an older remit).
    #[serde(default)]
    failure_streak: u32,
    #[serde(default)]
    failure_streak_since: Option<DateTime<Utc>>,
    #[serde(default)]
    disabled_reason: Option<String>,
    #[serde(default)]
    disabled_at: Option<DateTime<Utc>>,
    #[serde(default)]
    last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_error_at: Option<DateTime<Utc>>,
    #[serde(default)]
    disable_after_seconds: Option<i64>,
    #[serde(default)]
    disable_after_failures: Option<u32>,
    /// Its own settings (absent when unset, and in a file from an older
    /// remit: the runtime's values then apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rate_per_second: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    burst: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_in_flight: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_horizon_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    late_after_seconds: Option<i64>,
    /// Its custom headers, in order: a plain value in clear, a secret one
    /// sealed under the payload key (base64 parts), as its row holds it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    headers: Vec<header_lines::HeaderLine>,
    /// When it was deleted: the line is its tombstone, kept for the tasks
    /// that ended under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deleted_at: Option<DateTime<Utc>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretLine {
    id: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    key_fingerprint: String,
    nonce: String,
    ciphertext: String,
}

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

pub(super) fn destination_line(record: DestinationRecord) -> Result<DestinationLine, String> {
    let d = record.destination;
    let signing_secrets = record
        .secrets
        .into_iter()
        .map(|s| match s.value {
            StoredValue::Sealed(sealed) => Ok(SecretLine {
                id: s.id,
                created_at: s.created_at,
                expires_at: s.expires_at,
                key_fingerprint: STANDARD.encode(&sealed.key_fingerprint),
                nonce: STANDARD.encode(&sealed.nonce),
                ciphertext: STANDARD.encode(&sealed.ciphertext),
            }),
            StoredValue::Clear(_) => Err(format!(
                "destination {}: a signing secret is not sealed yet; export with \
                 REMIT_PAYLOAD_KEY set, which seals it first",
                d.id
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(DestinationLine {
        id: d.id.to_string(),
        region: d.region.to_string(),
        url: d.url.to_string(),
        signing_secret: None,
        signing_secrets,
        enabled: d.enabled,
        paused_until: d.paused_until,
        rate_tokens: record.rate_tokens,
        rate_refilled_at: record.rate_refilled_at,
        failure_streak: d.health.failure_streak,
        failure_streak_since: d.health.failure_streak_since,
        disabled_reason: d.health.disabled_reason.clone(),
        disabled_at: d.health.disabled_at,
        last_error: d.health.last_error.clone(),
        last_error_at: d.health.last_error_at,
        disable_after_seconds: d.health.overrides.after_seconds,
        disable_after_failures: d.health.overrides.failures,
        rate_per_second: d.settings.rate_per_second,
        burst: d.settings.burst,
        max_in_flight: d.settings.max_in_flight,
        timeout_ms: d.settings.timeout_ms,
        max_attempts: d.settings.max_attempts,
        retry_horizon_seconds: d.settings.retry_horizon_seconds,
        late_after_seconds: d.settings.late_after_seconds,
        headers: record.headers.into_iter().map(header_lines::line).collect(),
        deleted_at: record.deleted_at,
    })
}

pub(super) fn destination_record(line: DestinationLine) -> Result<DestinationRecord, String> {
    let url = url::Url::parse(&line.url).map_err(|e| format!("url: {e}"))?;
    let base64 = |field: &str, text: &str| {
        STANDARD
            .decode(text)
            .map_err(|_| format!("signing_secrets.{field}: not standard base64"))
    };
    let mut secrets = Vec::with_capacity(line.signing_secrets.len() + 1);
    for s in line.signing_secrets {
        secrets.push(SecretRecord {
            value: StoredValue::Sealed(SealedPayload {
                key_fingerprint: base64("key_fingerprint", &s.key_fingerprint)?,
                nonce: base64("nonce", &s.nonce)?,
                ciphertext: base64("ciphertext", &s.ciphertext)?,
            }),
            id: s.id,
            created_at: s.created_at,
            expires_at: s.expires_at,
        });
    }
    if let Some(secret) = line.signing_secret {
        if secret.is_empty() {
            return Err("signing_secret: must not be empty when given".into());
        }
        secrets.push(SecretRecord {
            id: uuid::Uuid::new_v4().to_string(),
            created_at: Utc::now(),
            expires_at: None,
            value: StoredValue::Clear(secret),
        });
    }
    let headers = line
        .headers
        .into_iter()
        .enumerate()
        .map(|(i, h)| header_lines::record(i, h))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DestinationRecord {
        destination: Destination {
            id: DestinationId::new(&line.id).map_err(|e| e.to_string())?,
            region: line.region.parse::<Region>().map_err(|e| e.to_string())?,
            url,
            has_signing_secret: !secrets.is_empty(),
            enabled: line.enabled,
            paused_until: line.paused_until,
            health: Box::new(DestinationHealth {
                failure_streak: line.failure_streak,
                failure_streak_since: line.failure_streak_since,
                disabled_reason: line.disabled_reason,
                disabled_at: line.disabled_at,
                last_error: line.last_error,
                last_error_at: line.last_error_at,
                overrides: DisableOverrides::new(
                    line.disable_after_seconds,
                    line.disable_after_failures,
                )
                .map_err(|e| e.to_string())?,
            }),
            settings: Box::new(DestinationSettings {
                rate_per_second: line.rate_per_second,
                burst: line.burst,
                max_in_flight: line.max_in_flight,
                timeout_ms: line.timeout_ms,
                max_attempts: line.max_attempts,
                retry_horizon_seconds: line.retry_horizon_seconds,
                late_after_seconds: line.late_after_seconds,
                headers: headers.iter().map(HeaderRecord::shown).collect(),
            }),
        },
        secrets,
        rate_tokens: line.rate_tokens,
        rate_refilled_at: line.rate_refilled_at,
        headers,
        deleted_at: line.deleted_at,
    })
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

fn bytes(field: &str, text: &str) -> Result<Vec<u8>, String> {
    STANDARD
        .decode(text)
        .map_err(|e| format!("{field}: not base64 ({e})"))
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
