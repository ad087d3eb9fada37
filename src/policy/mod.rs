//! Pure delivery policy: no I/O, and `now` is always an argument. Which
//! addresses a webhook may be sent to is policy too ([`blocked`]).
//!
//! # Layout
//! - `gate`: whether a claimed task may be sent now.
//! - `decision`: which transition an attempt's outcome causes;
//!   `retry_after` the receiver's Retry-After read; `backoff` the wait
//!   when it sent none.
//! - `retry_policy`: how hard remit keeps trying, every bound explicit.
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
mod retry_policy;

pub use address::{blocked, Blocked, BlockedRange, IPV4_BLOCKED, IPV6_BLOCKED};
pub use alerts::{failing_percent, late_after, level_reached, may_send};
pub use backoff::full_jitter_backoff;
pub use decision::{decide, Decision, Observed, Transition, TransportError};
pub use gate::{before_send, BeforeSend, Gate};
pub use health::{auto_reason, disables, last_error, DisableRule, Health, Streak, MANUAL_REASON};
pub use quota::{read_quota, Announced, Quota, QuotaFields, MAX_UNITS};
pub use retry_after::{parse_retry_after, server_deadline};
pub use retry_policy::RetryPolicy;
