//! The SQLite tables as rows: every instant is an INTEGER of microseconds
//! since the epoch (one format, compared as numbers, bound from Rust), every
//! id is TEXT. A row is read into the domain type, changed by `lifecycle`,
//! and written back whole.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Bool, Double, Integer, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use crate::domain::{
    Cancellation, Destination, DestinationHealth, DestinationId, DisableOverrides, OrderingKey,
    ReminderId, Task, TaskId, TenantId, TraceParent, WaitingChange,
};
use crate::store::contract::StoreError;
use crate::store::rules::columns::{
    corrupt, count, destination_settings, region, state_from_label, status,
};

/// A status as stored: clamped as PostgreSQL's SMALLINT column clamps it,
/// so every row written can be read back.
pub(super) fn status_column(status: u16) -> i32 {
    i32::from(status.min(i16::MAX as u16))
}

/// Microseconds since the epoch, as stored.
pub(super) fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

pub(super) fn instant(column: &'static str, micros: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_micros(micros).ok_or_else(|| corrupt(column, "out of range"))
}

pub(super) fn maybe(
    column: &'static str,
    micros: Option<i64>,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    micros.map(|m| instant(column, m)).transpose()
}

pub(super) fn uuid(column: &'static str, text: &str) -> Result<uuid::Uuid, StoreError> {
    uuid::Uuid::parse_str(text).map_err(|e| corrupt(column, e))
}

/// Every column of `tasks`, in the order `TASK_COLUMNS` names them.
pub(super) const TASK_COLUMNS: &str = "id, tenant_id, reminder_id, destination_id, region, \
    state, not_before, available_at, retry_horizon_at, lease_token, lease_owner, \
    lease_expires_at, attempt_count, attempts_before_replay, idempotency_key, payload_ref, \
    last_status, failure_reason, created_at, updated_at, delivered_at, finalized_at, seq, \
    ordering_key, traceparent, cancelled_at, cancelled_by, waiting_change, move_to, \
    payload_erased_at";

#[derive(QueryableByName)]
pub(super) struct TaskRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    tenant_id: String,
    #[diesel(sql_type = Text)]
    reminder_id: String,
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = BigInt)]
    not_before: i64,
    #[diesel(sql_type = BigInt)]
    available_at: i64,
    #[diesel(sql_type = BigInt)]
    retry_horizon_at: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    lease_token: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    lease_owner: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    lease_expires_at: Option<i64>,
    #[diesel(sql_type = Integer)]
    attempt_count: i32,
    #[diesel(sql_type = Integer)]
    attempts_before_replay: i32,
    #[diesel(sql_type = Text)]
    idempotency_key: String,
    #[diesel(sql_type = Text)]
    payload_ref: String,
    #[diesel(sql_type = Nullable<Integer>)]
    last_status: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    failure_reason: Option<String>,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = BigInt)]
    updated_at: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    delivered_at: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    finalized_at: Option<i64>,
    /// Insertion order: ties between rows of the same age go to the older.
    #[diesel(sql_type = BigInt)]
    pub seq: i64,
    #[diesel(sql_type = Nullable<Text>)]
    ordering_key: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    traceparent: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    cancelled_at: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    cancelled_by: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    waiting_change: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    move_to: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    payload_erased_at: Option<i64>,
}

impl TryFrom<TaskRow> for Task {
    type Error = StoreError;

    fn try_from(row: TaskRow) -> Result<Self, StoreError> {
        let state = state_from_label(row.state.as_bytes())
            .ok_or_else(|| corrupt("tasks.state", format!("unknown state {:?}", row.state)))?;
        let last_status = row
            .last_status
            .map(|s| i16::try_from(s).map_err(|e| corrupt("tasks.last_status", e)))
            .transpose()?;
        let cancelled = match (
            maybe("tasks.cancelled_at", row.cancelled_at)?,
            row.cancelled_by,
        ) {
            (Some(at), Some(by)) => Some(Cancellation { at, by }),
            (None, None) => None,
            _ => {
                return Err(corrupt(
                    "tasks.cancelled_by",
                    "set without cancelled_at, or the reverse",
                ))
            }
        };
        let move_to = maybe("tasks.move_to", row.move_to)?;
        let waiting_change = WaitingChange::from_columns(row.waiting_change.as_deref(), move_to)
            .ok_or_else(|| {
                corrupt(
                    "tasks.waiting_change",
                    format!(
                        "unknown change {:?} (or a move without move_to)",
                        row.waiting_change
                    ),
                )
            })?;
        Ok(Task {
            id: TaskId(uuid("tasks.id", &row.id)?),
            tenant_id: TenantId::new(&row.tenant_id).map_err(|e| corrupt("tenant_id", e))?,
            reminder_id: ReminderId::new(&row.reminder_id)
                .map_err(|e| corrupt("reminder_id", e))?,
            destination_id: DestinationId::new(&row.destination_id)
                .map_err(|e| corrupt("destination_id", e))?,
            region: region("tasks.region", &row.region)?,
            state,
            not_before: instant("tasks.not_before", row.not_before)?,
            available_at: instant("tasks.available_at", row.available_at)?,
            retry_horizon_at: instant("tasks.retry_horizon_at", row.retry_horizon_at)?,
            lease_token: row.lease_token,
            lease_owner: row.lease_owner,
            lease_expires_at: maybe("tasks.lease_expires_at", row.lease_expires_at)?,
            attempt_count: row.attempt_count,
            attempts_before_replay: row.attempts_before_replay,
            idempotency_key: row.idempotency_key,
            payload_ref: uuid("tasks.payload_ref", &row.payload_ref)?,
            last_status: status("tasks.last_status", last_status)?,
            failure_reason: row.failure_reason,
            created_at: instant("tasks.created_at", row.created_at)?,
            updated_at: instant("tasks.updated_at", row.updated_at)?,
            delivered_at: maybe("tasks.delivered_at", row.delivered_at)?,
            finalized_at: maybe("tasks.finalized_at", row.finalized_at)?,
            ordering_key: row
                .ordering_key
                .map(|k| OrderingKey::new(&k).map_err(|e| corrupt("ordering_key", e)))
                .transpose()?,
            traceparent: row
                .traceparent
                .map(|t| TraceParent::parse(&t).map_err(|e| corrupt("tasks.traceparent", e.reason)))
                .transpose()?,
            cancelled,
            waiting_change,
            payload_erased_at: maybe("tasks.payload_erased_at", row.payload_erased_at)?,
        })
    }
}

/// Reads the rows of `SELECT {TASK_COLUMNS} FROM tasks ...`.
pub(super) fn tasks(rows: Vec<TaskRow>) -> Result<Vec<Task>, StoreError> {
    rows.into_iter().map(Task::try_from).collect()
}

/// One task by id.
pub(super) fn task(conn: &mut SqliteConnection, id: TaskId) -> Result<Option<Task>, StoreError> {
    let rows: Vec<TaskRow> =
        diesel::sql_query(format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?"))
            .bind::<Text, _>(id.0.to_string())
            .load(conn)?;
    Ok(tasks(rows)?.pop())
}

/// Inserts a new task row.
pub(super) fn insert_task(conn: &mut SqliteConnection, t: &Task) -> Result<(), StoreError> {
    diesel::sql_query(
        "INSERT INTO tasks (id, tenant_id, reminder_id, destination_id, region, state, \
         not_before, available_at, retry_horizon_at, attempt_count, attempts_before_replay, \
         idempotency_key, payload_ref, created_at, updated_at, ordering_key, traceparent) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind::<Text, _>(t.id.0.to_string())
    .bind::<Text, _>(t.tenant_id.as_str())
    .bind::<Text, _>(t.reminder_id.as_str())
    .bind::<Text, _>(t.destination_id.as_str())
    .bind::<Text, _>(t.region.as_str())
    .bind::<Text, _>(t.state.as_str())
    .bind::<BigInt, _>(micros(t.not_before))
    .bind::<BigInt, _>(micros(t.available_at))
    .bind::<BigInt, _>(micros(t.retry_horizon_at))
    .bind::<Integer, _>(t.attempt_count)
    .bind::<Integer, _>(t.attempts_before_replay)
    .bind::<Text, _>(&t.idempotency_key)
    .bind::<Text, _>(t.payload_ref.to_string())
    .bind::<BigInt, _>(micros(t.created_at))
    .bind::<BigInt, _>(micros(t.updated_at))
    .bind::<Nullable<Text>, _>(t.ordering_key.as_ref().map(|k| k.as_str()))
    .bind::<Nullable<Text>, _>(t.traceparent.as_ref().map(|p| p.as_str()))
    .execute(conn)?;
    Ok(())
}

/// Writes back every column a transition (or an operator's change) may
/// change.
pub(super) fn write_task(conn: &mut SqliteConnection, t: &Task) -> Result<(), StoreError> {
    diesel::sql_query(
        "UPDATE tasks SET state = ?, not_before = ?, available_at = ?, retry_horizon_at = ?, \
         lease_token = ?, lease_owner = ?, lease_expires_at = ?, attempt_count = ?, \
         attempts_before_replay = ?, last_status = ?, failure_reason = ?, updated_at = ?, \
         delivered_at = ?, finalized_at = ?, cancelled_at = ?, cancelled_by = ?, \
         waiting_change = ?, move_to = ?, payload_erased_at = ? WHERE id = ?",
    )
    .bind::<Text, _>(t.state.as_str())
    .bind::<BigInt, _>(micros(t.not_before))
    .bind::<BigInt, _>(micros(t.available_at))
    .bind::<BigInt, _>(micros(t.retry_horizon_at))
    .bind::<Nullable<BigInt>, _>(t.lease_token)
    .bind::<Nullable<Text>, _>(&t.lease_owner)
    .bind::<Nullable<BigInt>, _>(t.lease_expires_at.map(micros))
    .bind::<Integer, _>(t.attempt_count)
    .bind::<Integer, _>(t.attempts_before_replay)
    .bind::<Nullable<Integer>, _>(t.last_status.map(status_column))
    .bind::<Nullable<Text>, _>(&t.failure_reason)
    .bind::<BigInt, _>(micros(t.updated_at))
    .bind::<Nullable<BigInt>, _>(t.delivered_at.map(micros))
    .bind::<Nullable<BigInt>, _>(t.finalized_at.map(micros))
    .bind::<Nullable<BigInt>, _>(t.cancelled.as_ref().map(|c| micros(c.at)))
    .bind::<Nullable<Text>, _>(t.cancelled.as_ref().map(|c| c.by.as_str()))
    .bind::<Nullable<Text>, _>(t.waiting_change.map(WaitingChange::label))
    .bind::<Nullable<BigInt>, _>(
        t.waiting_change
            .and_then(WaitingChange::move_to)
            .map(micros),
    )
    .bind::<Nullable<BigInt>, _>(t.payload_erased_at.map(micros))
    .bind::<Text, _>(t.id.0.to_string())
    .execute(conn)?;
    Ok(())
}

#[derive(QueryableByName)]
pub(super) struct DestinationRow {
    #[diesel(sql_type = Text)]
    pub id: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Text)]
    url: String,
    /// Once it has a secret, it always has one that signs: a rotation's
    /// new secret has no end.
    #[diesel(sql_type = Bool)]
    has_signing_secret: bool,
    #[diesel(sql_type = Bool)]
    enabled: bool,
    #[diesel(sql_type = Nullable<BigInt>)]
    paused_until: Option<i64>,
    #[diesel(sql_type = Nullable<Double>)]
    pub rate_tokens: Option<f64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub rate_refilled_at: Option<i64>,
    #[diesel(sql_type = Integer)]
    failure_streak: i32,
    #[diesel(sql_type = Nullable<BigInt>)]
    failure_streak_since: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    disabled_reason: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    disabled_at: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    last_error_at: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    disable_after_seconds: Option<i64>,
    #[diesel(sql_type = Nullable<Integer>)]
    disable_after_failures: Option<i32>,
    #[diesel(sql_type = Nullable<Double>)]
    rate_per_second: Option<f64>,
    #[diesel(sql_type = Nullable<Integer>)]
    burst: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    max_in_flight: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    timeout_ms: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    max_attempts: Option<i32>,
    #[diesel(sql_type = Nullable<BigInt>)]
    retry_horizon_seconds: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    late_after_seconds: Option<i64>,
    /// Set on a deleted destination's tombstone.
    #[diesel(sql_type = Nullable<BigInt>)]
    deleted_at: Option<i64>,
}

pub(super) const DESTINATION_COLUMNS: &str = "id, region, url, \
     EXISTS (SELECT 1 FROM destination_secrets s WHERE s.destination_id = destinations.id) \
     AS has_signing_secret, enabled, paused_until, rate_tokens, rate_refilled_at, \
     failure_streak, failure_streak_since, disabled_reason, disabled_at, last_error, \
     last_error_at, disable_after_seconds, disable_after_failures, rate_per_second, burst, max_in_flight, \
     timeout_ms, max_attempts, retry_horizon_seconds, late_after_seconds, deleted_at";

impl DestinationRow {
    /// When it was deleted, if it is a tombstone.
    pub fn deleted_at(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        maybe("destinations.deleted_at", self.deleted_at)
    }

    pub fn destination(&self) -> Result<Destination, StoreError> {
        Ok(Destination {
            id: DestinationId::new(&self.id).map_err(|e| corrupt("destinations.id", e))?,
            region: region("destinations.region", &self.region)?,
            url: url::Url::parse(&self.url).map_err(|e| corrupt("destinations.url", e))?,
            has_signing_secret: self.has_signing_secret,
            enabled: self.enabled,
            paused_until: maybe("destinations.paused_until", self.paused_until)?,
            health: Box::new(DestinationHealth {
                failure_streak: count("destinations.failure_streak", self.failure_streak)?,
                failure_streak_since: maybe(
                    "destinations.failure_streak_since",
                    self.failure_streak_since,
                )?,
                disabled_reason: self.disabled_reason.clone(),
                disabled_at: maybe("destinations.disabled_at", self.disabled_at)?,
                last_error: self.last_error.clone(),
                last_error_at: maybe("destinations.last_error_at", self.last_error_at)?,
                overrides: DisableOverrides {
                    after_seconds: self.disable_after_seconds,
                    failures: self
                        .disable_after_failures
                        .map(|f| count("destinations.disable_after_failures", f))
                        .transpose()?,
                },
            }),
            settings: Box::new(destination_settings(
                self.rate_per_second,
                [
                    self.burst,
                    self.max_in_flight,
                    self.timeout_ms,
                    self.max_attempts,
                ],
                self.retry_horizon_seconds,
                self.late_after_seconds,
            )?),
        })
    }

    pub fn refilled_at(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        maybe("destinations.rate_refilled_at", self.rate_refilled_at)
    }
}

/// The destination's row, a deleted one's tombstone included.
/// Whether the destination was deleted (a missing one was not).
pub(super) fn destination_deleted(
    conn: &mut SqliteConnection,
    id: &DestinationId,
) -> Result<bool, StoreError> {
    match any_destination_row(conn, id)? {
        Some(row) => Ok(row.deleted_at()?.is_some()),
        None => Ok(false),
    }
}

pub(super) fn any_destination_row(
    conn: &mut SqliteConnection,
    id: &DestinationId,
) -> Result<Option<DestinationRow>, StoreError> {
    let mut rows: Vec<DestinationRow> = diesel::sql_query(format!(
        "SELECT {DESTINATION_COLUMNS} FROM destinations WHERE id = ?"
    ))
    .bind::<Text, _>(id.as_str())
    .load(conn)?;
    Ok(rows.pop())
}

/// The destination's row, unless it is missing or deleted: what every
/// read and every operator's call sees.
pub(super) fn destination_row(
    conn: &mut SqliteConnection,
    id: &DestinationId,
) -> Result<Option<DestinationRow>, StoreError> {
    Ok(any_destination_row(conn, id)?.filter(|row| row.deleted_at.is_none()))
}
