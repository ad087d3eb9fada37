//! One clock for due times and arrivals: this host's wall clock, in
//! milliseconds since the Unix epoch. remit and PostgreSQL run on the same
//! host and read the same clock, so a lag measured on it has no skew in it.

use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};

/// Now, with sub-millisecond precision.
pub fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// A due time as the API takes it (whole milliseconds, so the payload's
/// copy and the stored `not_before` are the same instant).
pub fn due_at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}
