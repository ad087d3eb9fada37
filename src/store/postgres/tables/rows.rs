//! Row structs as diesel reads them, and their conversion into domain
//! types. Nothing outside `store` sees these.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use super::enums::{OutcomeColumn, StateColumn};
use super::schema::{attempts, destinations, payloads, tasks};
use crate::domain::{
    Attempt, AttemptRecord, Cancellation, Destination, DestinationHealth, DestinationId,
    DisableOverrides, OrderingKey, ReminderId, Task, TaskId, TenantId, TraceParent, WaitingChange,
};
use crate::payload_crypto::SealedPayload;
use crate::store::contract::StoreError;
use crate::store::rules::columns::destination_settings;
pub(crate) use crate::store::rules::columns::{corrupt, count, region, status};

#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = tasks)]
pub(crate) struct TaskRow {
    pub id: uuid::Uuid,
    pub tenant_id: String,
    pub reminder_id: String,
    pub destination_id: String,
    pub region: String,
    pub state: StateColumn,
    pub not_before: DateTime<Utc>,
    pub available_at: DateTime<Utc>,
    pub retry_horizon_at: DateTime<Utc>,
    pub lease_token: Option<i64>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub attempt_count: i32,
    pub idempotency_key: String,
    pub payload_ref: uuid::Uuid,
    pub last_status: Option<i16>,
    pub failure_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub finalized_at: Option<DateTime<Utc>>,
    pub attempts_before_replay: i32,
    pub ordering_key: Option<String>,
    pub traceparent: Option<String>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub cancelled_by: Option<String>,
    pub waiting_change: Option<String>,
    pub move_to: Option<DateTime<Utc>>,
    pub payload_erased_at: Option<DateTime<Utc>>,
}

const HAS_SECRET_SQL: &str =
    "EXISTS (SELECT 1 FROM destination_secrets s WHERE s.destination_id = destinations.id)";

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = destinations)]
pub(crate) struct DestinationRow {
    pub id: String,
    pub region: String,
    pub url: String,
    /// Whether it has a secret: once it has one, it always has one that
    /// signs, since a rotation's new secret has no end.
    #[diesel(select_expression = diesel::dsl::sql::<diesel::sql_types::Bool>(HAS_SECRET_SQL))]
    #[diesel(select_expression_type = diesel::expression::SqlLiteral<diesel::sql_types::Bool>)]
    pub has_signing_secret: bool,
    pub enabled: bool,
    pub paused_until: Option<DateTime<Utc>>,
    pub failure_streak: i32,
    pub failure_streak_since: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub disable_after_seconds: Option<i64>,
    pub disable_after_failures: Option<i32>,
    pub rate_per_second: Option<f64>,
    pub burst: Option<i32>,
    pub max_in_flight: Option<i32>,
    pub timeout_ms: Option<i32>,
    pub max_attempts: Option<i32>,
    pub retry_horizon_seconds: Option<i64>,
    pub late_after_seconds: Option<i64>,
}

/// A numeric setting's value as its column holds it: a count as a
/// PostgreSQL `integer` (a bound keeps it far below `i32::MAX`), a rate or
/// a number of seconds as it is.
pub(crate) trait SettingColumn: Copy {
    type Column;
    fn column(self) -> Self::Column;
}

impl SettingColumn for u32 {
    type Column = i32;
    fn column(self) -> i32 {
        i32::try_from(self).unwrap_or(i32::MAX)
    }
}

impl SettingColumn for f64 {
    type Column = f64;
    fn column(self) -> f64 {
        self
    }
}

impl SettingColumn for i64 {
    type Column = i64;
    fn column(self) -> i64 {
        self
    }
}

macro_rules! settings_columns {
    ([] $($name:ident: $ty:ident = $least:tt ..= $most:tt, $label:literal, $doc:literal;)*) => {
        /// Every numeric setting's column as `s` holds it: part of the
        /// values of an insert or of an update.
        #[allow(clippy::type_complexity)]
        pub(crate) fn settings_columns(
            s: &crate::domain::DestinationSettings,
        ) -> ($(diesel::dsl::Eq<destinations::$name, Option<<$ty as SettingColumn>::Column>>,)*) {
            ($(destinations::$name.eq(s.$name.map(SettingColumn::column)),)*)
        }
    };
}

crate::destination_settings!(settings_columns);

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = payloads)]
pub(crate) struct PayloadRow {
    pub content_type: String,
    pub key_fingerprint: Vec<u8>,
    pub nonce: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = attempts)]
pub(crate) struct AttemptRow {
    pub task_id: uuid::Uuid,
    pub attempt_number: i32,
    pub lease_token: i64,
    pub consumer_id: String,
    pub started_at: Option<DateTime<Utc>>,
    pub received_at: Option<DateTime<Utc>>,
    pub http_status: Option<i16>,
    pub transport_error: Option<String>,
    pub retry_after_raw: Option<String>,
    pub retry_after_deadline: Option<DateTime<Utc>>,
    pub outcome: OutcomeColumn,
    pub next_available_at: Option<DateTime<Utc>>,
    pub recorded_at: DateTime<Utc>,
}

impl TryFrom<TaskRow> for Task {
    type Error = StoreError;

    fn try_from(row: TaskRow) -> Result<Self, StoreError> {
        Ok(Task {
            id: TaskId(row.id),
            tenant_id: TenantId::new(&row.tenant_id).map_err(|e| corrupt("tenant_id", e))?,
            reminder_id: ReminderId::new(&row.reminder_id)
                .map_err(|e| corrupt("reminder_id", e))?,
            destination_id: DestinationId::new(&row.destination_id)
                .map_err(|e| corrupt("destination_id", e))?,
            region: region("tasks.region", &row.region)?,
            state: row.state.0,
            not_before: row.not_before,
            available_at: row.available_at,
            retry_horizon_at: row.retry_horizon_at,
            lease_token: row.lease_token,
            lease_owner: row.lease_owner,
            lease_expires_at: row.lease_expires_at,
            attempt_count: row.attempt_count,
            idempotency_key: row.idempotency_key,
            payload_ref: row.payload_ref,
            last_status: status("tasks.last_status", row.last_status)?,
            failure_reason: row.failure_reason,
            created_at: row.created_at,
            updated_at: row.updated_at,
            delivered_at: row.delivered_at,
            finalized_at: row.finalized_at,
            attempts_before_replay: row.attempts_before_replay,
            ordering_key: row
                .ordering_key
                .map(|k| OrderingKey::new(&k).map_err(|e| corrupt("ordering_key", e)))
                .transpose()?,
            traceparent: row
                .traceparent
                .map(|t| TraceParent::parse(&t).map_err(|e| corrupt("tasks.traceparent", e.reason)))
                .transpose()?,
            cancelled: row.cancelled_at.map(|at| Cancellation {
                at,
                by: row.cancelled_by.unwrap_or_default(),
            }),
            waiting_change: WaitingChange::from_columns(row.waiting_change.as_deref(), row.move_to)
                .ok_or_else(|| {
                    corrupt(
                        "tasks.waiting_change",
                        format!("{:?} is not a change this build knows", row.waiting_change),
                    )
                })?,
            payload_erased_at: row.payload_erased_at,
        })
    }
}

impl TryFrom<DestinationRow> for Destination {
    type Error = StoreError;

    fn try_from(row: DestinationRow) -> Result<Self, StoreError> {
        Ok(Destination {
            id: DestinationId::new(&row.id).map_err(|e| corrupt("destinations.id", e))?,
            region: region("destinations.region", &row.region)?,
            url: url::Url::parse(&row.url).map_err(|e| corrupt("destinations.url", e))?,
            has_signing_secret: row.has_signing_secret,
            enabled: row.enabled,
            paused_until: row.paused_until,
            health: Box::new(DestinationHealth {
                failure_streak: count("destinations.failure_streak", row.failure_streak)?,
                failure_streak_since: row.failure_streak_since,
                disabled_reason: row.disabled_reason,
                disabled_at: row.disabled_at,
                last_error: row.last_error,
                last_error_at: row.last_error_at,
                overrides: DisableOverrides {
                    after_seconds: row.disable_after_seconds,
                    failures: row
                        .disable_after_failures
                        .map(|f| count("destinations.disable_after_failures", f))
                        .transpose()?,
                },
            }),
            settings: Box::new(destination_settings(
                row.rate_per_second,
                [
                    row.burst,
                    row.max_in_flight,
                    row.timeout_ms,
                    row.max_attempts,
                ],
                row.retry_horizon_seconds,
                row.late_after_seconds,
            )?),
        })
    }
}

impl From<PayloadRow> for SealedPayload {
    fn from(row: PayloadRow) -> Self {
        SealedPayload {
            key_fingerprint: row.key_fingerprint,
            nonce: row.nonce,
            ciphertext: row.ciphertext,
        }
    }
}

impl TryFrom<AttemptRow> for Attempt {
    type Error = StoreError;

    fn try_from(row: AttemptRow) -> Result<Self, StoreError> {
        Ok(Attempt {
            task_id: TaskId(row.task_id),
            attempt_number: row.attempt_number,
            lease_token: row.lease_token,
            lease_owner: row.consumer_id,
            outcome: row.outcome.0,
            observed: AttemptRecord {
                started_at: row.started_at,
                received_at: row.received_at,
                http_status: status("attempts.http_status", row.http_status)?,
                transport_error: row.transport_error,
                retry_after_raw: row.retry_after_raw,
                retry_after_deadline: row.retry_after_deadline,
            },
            next_available_at: row.next_available_at,
            recorded_at: row.recorded_at,
        })
    }
}

/// A delay as bound into SQL: never negative, and at most a century, so
/// `now() + delay` cannot overflow PostgreSQL's timestamps.
pub(in crate::store::postgres) fn delay_millis(delay: chrono::Duration) -> i64 {
    let longest = chrono::Duration::days(crate::store::rules::lifecycle::LONGEST_DELAY_DAYS);
    delay
        .num_milliseconds()
        .clamp(0, longest.num_milliseconds())
}
