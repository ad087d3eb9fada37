//! A destination's health over one hour: what its ended attempts were,
//! how long their requests took, and how late their first tries started.
//! The finish keeps one row per destination and hour, in the same
//! transaction as the attempts it counts; the API and the console read
//! them back.
//!
//! What counts is every attempt a finish applies: a request that got an
//! answer, or that ended in a transport error. An attempt that ends
//! without one is not counted: an `abandoned` attempt (its sender failed
//! after the request may have gone out, or its lease ran out, so nothing
//! is known of the answer), an unsent failure (the retry budget ran out
//! before a request), and a late report from a lease owner that had lost
//! its lease (`fenced`). Each counted attempt falls in exactly one class,
//! so `attempts` is always the sum of the classes.

use chrono::{DateTime, Duration, DurationRound, Utc};

use super::attempt::AttemptRecord;
use super::histogram::Histogram;

/// What one attempt's exchange ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptClass {
    /// A 2xx answer.
    Succeeded,
    /// No answer: the connection, TLS or the exchange failed, or the send
    /// policy refused the address. Not a timeout.
    Transport,
    /// No answer within the send timeout.
    Timeout,
    /// A 4xx answer other than 429.
    ClientError,
    /// A 429 answer, with or without Retry-After.
    RateLimited,
    /// A 5xx answer (a 503 with Retry-After included).
    ServerError,
    /// Any other status: 1xx, 3xx (redirects are not followed), or one
    /// outside 100–599.
    OtherStatus,
}

impl AttemptClass {
    /// The class of an exchange; `None` when there was none (neither a
    /// status nor a transport error: nothing to count).
    pub fn of(record: &AttemptRecord) -> Option<Self> {
        Some(
            match (record.http_status, record.transport_error.as_deref()) {
                (Some(200..=299), _) => AttemptClass::Succeeded,
                (Some(429), _) => AttemptClass::RateLimited,
                (Some(400..=499), _) => AttemptClass::ClientError,
                (Some(500..=599), _) => AttemptClass::ServerError,
                (Some(_), _) => AttemptClass::OtherStatus,
                (None, Some("timeout")) => AttemptClass::Timeout,
                (None, Some(_)) => AttemptClass::Transport,
                (None, None) => return None,
            },
        )
    }

    /// The code the stores carry it as through a batch.
    pub fn code(self) -> i16 {
        match self {
            AttemptClass::Succeeded => 0,
            AttemptClass::Transport => 1,
            AttemptClass::Timeout => 2,
            AttemptClass::ClientError => 3,
            AttemptClass::RateLimited => 4,
            AttemptClass::ServerError => 5,
            AttemptClass::OtherStatus => 6,
        }
    }
}

/// Attempts of an hour, by class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttemptCounts {
    pub succeeded: u64,
    pub transport: u64,
    pub timeout: u64,
    pub client_error: u64,
    pub rate_limited: u64,
    pub server_error: u64,
    pub other_status: u64,
}

impl AttemptCounts {
    /// Every attempt counted, the sum of the classes.
    pub fn attempts(&self) -> u64 {
        self.succeeded + self.failed()
    }

    /// Attempts of every class but `succeeded`.
    pub fn failed(&self) -> u64 {
        self.transport
            + self.timeout
            + self.client_error
            + self.rate_limited
            + self.server_error
            + self.other_status
    }

    pub fn add(&mut self, class: AttemptClass) {
        *self.of_mut(class) += 1;
    }

    pub fn merge(&mut self, other: &AttemptCounts) {
        self.succeeded += other.succeeded;
        self.transport += other.transport;
        self.timeout += other.timeout;
        self.client_error += other.client_error;
        self.rate_limited += other.rate_limited;
        self.server_error += other.server_error;
        self.other_status += other.other_status;
    }

    fn of_mut(&mut self, class: AttemptClass) -> &mut u64 {
        match class {
            AttemptClass::Succeeded => &mut self.succeeded,
            AttemptClass::Transport => &mut self.transport,
            AttemptClass::Timeout => &mut self.timeout,
            AttemptClass::ClientError => &mut self.client_error,
            AttemptClass::RateLimited => &mut self.rate_limited,
            AttemptClass::ServerError => &mut self.server_error,
            AttemptClass::OtherStatus => &mut self.other_status,
        }
    }
}

/// One destination's hour.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestinationHour {
    /// The hour's start (UTC, on the hour); an attempt belongs to the hour
    /// in which its finish was recorded, on the store's clock.
    pub hour: DateTime<Utc>,
    pub counts: AttemptCounts,
    /// Send latency: from the request's start to its answer (or to its
    /// transport error, a timeout's at the send timeout), for every
    /// counted attempt.
    pub latency: Histogram,
    /// Lateness: from the task's `not_before` to the start of its first
    /// attempt's request (the attempt numbered 1; retries and a replay's
    /// attempts are not counted here). How late remit itself was, before
    /// the receiver had any say.
    pub lateness: Histogram,
}

impl DestinationHour {
    /// The empty hour that `at` falls in.
    pub fn empty_at(at: DateTime<Utc>) -> Self {
        Self {
            hour: hour_of(at),
            ..Self::default()
        }
    }

    /// Counts one ended attempt of a task due at `not_before`, numbered
    /// `attempt`; an attempt with no exchange counts nothing.
    pub fn count(&mut self, record: &AttemptRecord, attempt: i32, not_before: DateTime<Utc>) {
        let Some(class) = AttemptClass::of(record) else {
            return;
        };
        self.counts.add(class);
        if let (Some(started), Some(received)) = (record.started_at, record.received_at) {
            self.latency.add(received - started);
        }
        if let (Some(started), 1) = (record.started_at, attempt) {
            self.lateness.add(started - not_before);
        }
    }

    /// Adds another count of the same hour.
    pub fn merge(&mut self, other: &DestinationHour) {
        self.counts.merge(&other.counts);
        self.latency.merge(&other.latency);
        self.lateness.merge(&other.lateness);
    }
}

/// The start of the hour (UTC) that holds `at`.
pub fn hour_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(Duration::hours(1)).unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn answered(status: u16) -> AttemptRecord {
        AttemptRecord {
            http_status: Some(status),
            ..AttemptRecord::default()
        }
    }

    fn failed(kind: &str) -> AttemptRecord {
        AttemptRecord {
            transport_error: Some(kind.to_owned()),
            ..AttemptRecord::default()
        }
    }

    #[test]
    fn each_exchange_falls_in_one_class() {
        let class = |r: &AttemptRecord| AttemptClass::of(r);
        assert_eq!(class(&answered(204)), Some(AttemptClass::Succeeded));
        assert_eq!(class(&answered(429)), Some(AttemptClass::RateLimited));
        assert_eq!(class(&answered(404)), Some(AttemptClass::ClientError));
        assert_eq!(class(&answered(503)), Some(AttemptClass::ServerError));
        assert_eq!(class(&answered(302)), Some(AttemptClass::OtherStatus));
        assert_eq!(class(&failed("timeout")), Some(AttemptClass::Timeout));
        assert_eq!(class(&failed("connect")), Some(AttemptClass::Transport));
        assert_eq!(class(&failed("io")), Some(AttemptClass::Transport));
        assert_eq!(class(&AttemptRecord::default()), None);
    }

    #[test]
    fn an_hour_counts_latency_always_and_lateness_on_first_attempts() {
        let due = Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
        let record = AttemptRecord {
            http_status: Some(500),
            started_at: Some(due + Duration::milliseconds(30)),
            received_at: Some(due + Duration::milliseconds(130)),
            ..AttemptRecord::default()
        };
        let mut hour = DestinationHour::empty_at(due + Duration::minutes(59));
        assert_eq!(hour.hour, due);
        hour.count(&record, 1, due);
        hour.count(&record, 2, due);
        hour.count(&AttemptRecord::default(), 1, due);
        assert_eq!(hour.counts.server_error, 2);
        assert_eq!(hour.counts.attempts(), 2);
        assert_eq!(hour.counts.failed(), 2);
        assert_eq!(hour.latency.total(), 2);
        assert_eq!(hour.lateness.total(), 1);
        assert_eq!(
            hour.lateness.quantile(0.99),
            Some(Duration::microseconds(32_000))
        );
    }
}
