//! Pure delivery policy: no I/O, and `now` is always an argument. Which
//! addresses a webhook may be sent to is policy too ([`blocked`]).
//!
//! # Layout
//! - `gate`: whether a claimed task may be sent now.
//! - `decision`: which transition an attempt's outcome causes;
//!   `retry_after` the receiver's Retry-After read; `backoff` the wait
//!   when it sent none.
//! - `quota`: the quota a receiver announces on its responses.
//! - `health`: when a destination that keeps failing is disabled;
//!   `alerts` when a person is told.
//! - `address`: the IP addresses a webhook is never sent to.

mod address;
mod alerts;
mod backoff;
mod decision;
mod gate;
mod health;
mod quota;
mod retry_after;

pub use address::{blocked, Blocked, BlockedRange, IPV4_BLOCKED, IPV6_BLOCKED};
pub use alerts::{failing_percent, late_after, level_reached, may_send};
pub use backoff::full_jitter_backoff;
pub use decision::{decide, Decision, Observed, Transition, TransportError};
pub use gate::{before_send, BeforeSend, Gate};
pub use health::{auto_reason, disables, last_error, DisableRule, Health, Streak, MANUAL_REASON};
pub use quota::{read_quota, Announced, Quota, QuotaFields, MAX_UNITS};
pub use retry_after::{parse_retry_after, server_deadline};

use chrono::Duration;

/// How hard remit keeps trying. Every bound is explicit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// First local backoff ceiling; doubles per attempt.
    pub backoff_base: Duration,
    /// Largest local backoff ceiling.
    pub backoff_cap: Duration,
    /// Attempts after which a retryable outcome fails with `max_attempts`.
    pub max_attempts: u32,
    /// Longest wait a receiver's Retry-After may impose.
    pub max_server_delay: Duration,
    /// Default time after `not_before` during which retries may start.
    pub horizon: Duration,
    /// Statuses that lead to `retry_wait` rather than `failed`.
    pub retryable_statuses: Vec<u16>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            backoff_base: Duration::seconds(5),
            backoff_cap: Duration::hours(1),
            max_attempts: 20,
            max_server_delay: Duration::hours(24),
            horizon: Duration::days(3),
            retryable_statuses: vec![408, 425, 429, 500, 502, 503, 504],
        }
    }
}
