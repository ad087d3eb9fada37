//! Which transition an attempt's outcome causes.

use chrono::{DateTime, Duration, Utc};
use rand::Rng;

use super::backoff::full_jitter_backoff;
use super::retry_after::server_deadline;
use super::retry_policy::RetryPolicy;
use crate::domain::{AttemptRecord, FailureReason};

/// Why no HTTP response arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportError {
    Timeout,
    Connect,
    Tls,
    /// The connection broke mid-exchange, or the response was malformed.
    Io,
    /// The send policy refused the destination's address before any
    /// connection was made. Terminal: the same answer would come again.
    BlockedAddress,
}

impl TransportError {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportError::Timeout => "timeout",
            TransportError::Connect => "connect",
            TransportError::Tls => "tls",
            TransportError::Io => "io",
            TransportError::BlockedAddress => "blocked_address",
        }
    }
}

/// What one attempt saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// The attempts that count against the budget, this one included,
    /// counting from 1: `Task::attempts_since_replay`, so a replayed task
    /// starts a fresh budget and a fresh backoff.
    pub attempt: u32,
    pub retry_horizon_at: DateTime<Utc>,
    pub started_at: DateTime<Utc>,
    /// Local receipt time: the basis for Retry-After delta-seconds.
    pub received_at: DateTime<Utc>,
    /// The response's own `Date` header, when it had a valid one: the
    /// basis for reading a Retry-After HTTP-date on the receiver's clock.
    pub server_date: Option<DateTime<Utc>>,
    pub response: Result<(u16, Option<String>), TransportError>,
}

/// The next state of the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    Deliver,
    RetryWait { available_at: DateTime<Utc> },
    Fail(FailureReason),
}

/// Everything the finishing transition needs, and the attempt row to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub transition: Transition,
    /// Hold every task of this destination until then (a 429, or a 503 with
    /// Retry-After), even when this task itself fails.
    pub pause_destination_until: Option<DateTime<Utc>>,
    pub record: AttemptRecord,
}

impl Decision {
    pub fn next_available_at(&self) -> Option<DateTime<Utc>> {
        match self.transition {
            Transition::RetryWait { available_at } => Some(available_at),
            _ => None,
        }
    }

    /// How long after the response arrived the task may go again. A store
    /// adds this to its own clock, so a consumer whose clock is off never
    /// makes a task due early.
    pub fn retry_delay(&self) -> Option<Duration> {
        Some(self.since_receipt(self.next_available_at()?))
    }

    /// How long after the response arrived the destination stays paused.
    pub fn pause_delay(&self) -> Option<Duration> {
        Some(self.since_receipt(self.pause_destination_until?))
    }

    fn since_receipt(&self, at: DateTime<Utc>) -> Duration {
        self.record
            .received_at
            .map_or(Duration::zero(), |received| at - received)
            .max(Duration::zero())
    }
}

/// Classifies one attempt. Pure: the only inputs are the arguments.
pub fn decide(observed: &Observed, policy: &RetryPolicy, rng: &mut impl Rng) -> Decision {
    let mut record = AttemptRecord {
        started_at: Some(observed.started_at),
        received_at: Some(observed.received_at),
        ..AttemptRecord::default()
    };
    let (transition, pause) = match &observed.response {
        Err(kind) => {
            record.transport_error = Some(kind.as_str().to_owned());
            let transition = match kind {
                TransportError::BlockedAddress => Transition::Fail(FailureReason::BlockedAddress),
                _ => retry(observed, None, policy, rng),
            };
            (transition, None)
        }
        Ok((status, retry_after)) => {
            let status = *status;
            record.http_status = Some(status);
            record.retry_after_raw = retry_after.clone();
            let deadline = server_deadline(
                retry_after.as_deref(),
                observed.received_at,
                observed.server_date,
                policy.max_server_delay,
            );
            record.retry_after_deadline = deadline;
            match status {
                200..=299 => (Transition::Deliver, None),
                300..=399 => (Transition::Fail(FailureReason::Redirect(status)), None),
                429 => {
                    let next = retry_at(observed, deadline, policy, rng);
                    (bounded(observed, next, policy), Some(next))
                }
                503 if deadline.is_some() => (
                    bounded(observed, deadline.unwrap_or_default(), policy),
                    deadline,
                ),
                s if policy.retryable_statuses.contains(&s) => {
                    (retry(observed, deadline, policy, rng), None)
                }
                s => (Transition::Fail(FailureReason::Status(s)), None),
            }
        }
    };
    Decision {
        transition,
        pause_destination_until: pause,
        record,
    }
}

/// The server's deadline when it gave one (never jittered), else backoff.
fn retry_at(
    observed: &Observed,
    deadline: Option<DateTime<Utc>>,
    policy: &RetryPolicy,
    rng: &mut impl Rng,
) -> DateTime<Utc> {
    deadline.unwrap_or_else(|| {
        let backoff = full_jitter_backoff(
            observed.attempt,
            policy.backoff_base,
            policy.backoff_cap,
            rng,
        );
        // Saturates: a cap too large for the calendar means "never", and
        // the horizon then fails the task.
        observed
            .received_at
            .checked_add_signed(backoff)
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    })
}

fn retry(
    observed: &Observed,
    deadline: Option<DateTime<Utc>>,
    policy: &RetryPolicy,
    rng: &mut impl Rng,
) -> Transition {
    let next = retry_at(observed, deadline, policy, rng);
    bounded(observed, next, policy)
}

/// A retry at `next`, unless the attempt budget or the horizon forbids it.
/// A deadline past the horizon fails rather than being pulled in: retrying
/// earlier than the receiver asked would break its stated window.
fn bounded(observed: &Observed, next: DateTime<Utc>, policy: &RetryPolicy) -> Transition {
    if observed.attempt >= policy.max_attempts {
        Transition::Fail(FailureReason::MaxAttempts)
    } else if next > observed.retry_horizon_at {
        Transition::Fail(FailureReason::RetryHorizon)
    } else {
        Transition::RetryWait { available_at: next }
    }
}

#[cfg(test)]
#[path = "decision_tests.rs"]
mod tests;
