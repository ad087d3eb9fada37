//! How hard remit keeps trying: backoff, attempts, the longest wait a
//! receiver may impose, the horizon, and which statuses are retried.

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
