//! The attempt log's rows on SQLite: how an attempt is written and read
//! back (instants as microseconds, as in `rows`).

use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{instant, maybe, micros, status_column, uuid};
use crate::domain::{Attempt, AttemptRecord, TaskId};
use crate::store::contract::StoreError;
use crate::store::rules::columns::{corrupt, outcome_from_label, outcome_label};

pub(super) fn insert_attempt(conn: &mut SqliteConnection, a: &Attempt) -> Result<(), StoreError> {
    let o = &a.observed;
    diesel::sql_query(
        "INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, started_at, \
         received_at, http_status, transport_error, retry_after_raw, retry_after_deadline, \
         outcome, next_available_at, recorded_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind::<Text, _>(a.task_id.0.to_string())
    .bind::<Integer, _>(a.attempt_number)
    .bind::<BigInt, _>(a.lease_token)
    .bind::<Text, _>(&a.lease_owner)
    .bind::<Nullable<BigInt>, _>(o.started_at.map(micros))
    .bind::<Nullable<BigInt>, _>(o.received_at.map(micros))
    .bind::<Nullable<Integer>, _>(o.http_status.map(status_column))
    .bind::<Nullable<Text>, _>(&o.transport_error)
    .bind::<Nullable<Text>, _>(&o.retry_after_raw)
    .bind::<Nullable<BigInt>, _>(o.retry_after_deadline.map(micros))
    .bind::<Text, _>(outcome_label(a.outcome))
    .bind::<Nullable<BigInt>, _>(a.next_available_at.map(micros))
    .bind::<BigInt, _>(micros(a.recorded_at))
    .execute(conn)?;
    Ok(())
}

#[derive(QueryableByName)]
pub(super) struct AttemptRow {
    #[diesel(sql_type = Text)]
    task_id: String,
    #[diesel(sql_type = Integer)]
    attempt_number: i32,
    #[diesel(sql_type = BigInt)]
    lease_token: i64,
    #[diesel(sql_type = Text)]
    consumer_id: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    started_at: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    received_at: Option<i64>,
    #[diesel(sql_type = Nullable<Integer>)]
    http_status: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    transport_error: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    retry_after_raw: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    retry_after_deadline: Option<i64>,
    #[diesel(sql_type = Text)]
    outcome: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    next_available_at: Option<i64>,
    #[diesel(sql_type = BigInt)]
    recorded_at: i64,
}

pub(super) const ATTEMPT_COLUMNS: &str = "task_id, attempt_number, lease_token, consumer_id, \
    started_at, received_at, http_status, transport_error, retry_after_raw, \
    retry_after_deadline, outcome, next_available_at, recorded_at";

impl TryFrom<AttemptRow> for Attempt {
    type Error = StoreError;

    fn try_from(row: AttemptRow) -> Result<Self, StoreError> {
        let outcome = outcome_from_label(row.outcome.as_bytes()).ok_or_else(|| {
            corrupt(
                "attempts.outcome",
                format!("unknown outcome {:?}", row.outcome),
            )
        })?;
        let http_status = row
            .http_status
            .map(|s| u16::try_from(s).map_err(|e| corrupt("attempts.http_status", e)))
            .transpose()?;
        Ok(Attempt {
            task_id: TaskId(uuid("attempts.task_id", &row.task_id)?),
            attempt_number: row.attempt_number,
            lease_token: row.lease_token,
            lease_owner: row.consumer_id,
            outcome,
            observed: AttemptRecord {
                started_at: maybe("attempts.started_at", row.started_at)?,
                received_at: maybe("attempts.received_at", row.received_at)?,
                http_status,
                transport_error: row.transport_error,
                retry_after_raw: row.retry_after_raw,
                retry_after_deadline: maybe(
                    "attempts.retry_after_deadline",
                    row.retry_after_deadline,
                )?,
            },
            next_available_at: maybe("attempts.next_available_at", row.next_available_at)?,
            recorded_at: instant("attempts.recorded_at", row.recorded_at)?,
        })
    }
}
