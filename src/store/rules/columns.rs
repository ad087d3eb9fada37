//! How every store writes the domain's values in its columns: the labels
//! of task states and attempt outcomes (PostgreSQL's ENUM values, SQLite's
//! text), and the error for a column that holds what no build wrote.

use crate::domain::{AttemptOutcome, Region, TaskState};
use crate::store::contract::StoreError;

pub(crate) fn state_label(state: TaskState) -> &'static str {
    state.as_str()
}

pub(crate) fn outcome_label(outcome: AttemptOutcome) -> &'static str {
    outcome.as_str()
}

pub(crate) fn state_from_label(label: &[u8]) -> Option<TaskState> {
    TaskState::from_label(std::str::from_utf8(label).ok()?)
}

pub(crate) fn outcome_from_label(label: &[u8]) -> Option<AttemptOutcome> {
    Some(match label {
        b"delivered" => AttemptOutcome::Delivered,
        b"retry_wait" => AttemptOutcome::RetryWait,
        b"failed" => AttemptOutcome::Failed,
        b"fenced" => AttemptOutcome::Fenced,
        b"abandoned" => AttemptOutcome::Abandoned,
        _ => return None,
    })
}

pub(crate) fn corrupt(column: &'static str, reason: impl ToString) -> StoreError {
    StoreError::Corrupt {
        column,
        reason: reason.to_string(),
    }
}

pub(crate) fn region(column: &'static str, text: &str) -> Result<Region, StoreError> {
    text.parse().map_err(|e| corrupt(column, e))
}

pub(crate) fn status(column: &'static str, value: Option<i16>) -> Result<Option<u16>, StoreError> {
    value
        .map(|s| u16::try_from(s).map_err(|e| corrupt(column, e)))
        .transpose()
}

/// A count column, never negative.
pub(crate) fn count(column: &'static str, value: i32) -> Result<u32, StoreError> {
    u32::try_from(value).map_err(|e| corrupt(column, e))
}

/// A destination's settings as every store reads its columns back:
/// `counts` are its burst, in-flight cap, timeout and attempts, each NULL
/// or positive (a CHECK keeps them so). Headers are rows of their own, read
/// apart by those who need them.
pub(crate) fn destination_settings(
    rate_per_second: Option<f64>,
    counts: [Option<i32>; 4],
    retry_horizon_seconds: Option<i64>,
    late_after_seconds: Option<i64>,
) -> Result<crate::domain::DestinationSettings, StoreError> {
    let [burst, max_in_flight, timeout_ms, max_attempts] = counts;
    let setting =
        |column: &'static str, value: Option<i32>| value.map(|v| count(column, v)).transpose();
    Ok(crate::domain::DestinationSettings {
        rate_per_second,
        burst: setting("destinations.burst", burst)?,
        max_in_flight: setting("destinations.max_in_flight", max_in_flight)?,
        timeout_ms: setting("destinations.timeout_ms", timeout_ms)?,
        max_attempts: setting("destinations.max_attempts", max_attempts)?,
        retry_horizon_seconds,
        late_after_seconds,
        headers: Vec::new(),
    })
}
