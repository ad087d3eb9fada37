//! Whether a claimed task may be sent now: the rules every consumer applies
//! right before a request, in one place, so the runtime and the simulation
//! run the same ones. Pure: the caller reads the store and its clocks and
//! passes what it saw.

use chrono::Duration;

use super::retry_policy::RetryPolicy;
use crate::domain::{FailureReason, Task};

/// What a consumer saw right before a request.
#[derive(Debug, Clone, Copy)]
pub struct BeforeSend<'a> {
    pub task: &'a Task,
    /// The destination is disabled (by hand or after a failure streak), as
    /// its row said right before the request.
    pub disabled: bool,
    /// What is left of the destination's pause: the longer of what the
    /// store's row says (on the store's clock) and what this consumer knows
    /// of (a 429 it got itself, a pause it was told of). `None`: not paused.
    pub pause_left: Option<Duration>,
    /// What is left of the lease, by this consumer's own reckoning.
    pub lease_left: Duration,
    /// What a request needs of the lease: the send timeout plus a margin
    /// for the finish to commit.
    pub lease_needed: Duration,
}

/// What to do with the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Send,
    /// Give it back unsent, not counted as an attempt, due again this long
    /// after the store's now (`None`: at once).
    HandBack {
        after: Option<Duration>,
    },
    /// End it unsent with this reason.
    Fail(FailureReason),
}

/// The checks, in order: a task whose attempts were used up by consumers
/// that died with it is not sent again; a disabled destination gets nothing
/// (its task goes back unsent, and no claim takes it again until the
/// destination is enabled, or it fails at its horizon); a paused destination
/// holds it until the pause ends; a lease too short for the request and its
/// finish hands it back.
pub fn before_send(seen: &BeforeSend<'_>, policy: &RetryPolicy) -> Gate {
    if seen.task.attempts_since_replay() > policy.max_attempts {
        return Gate::Fail(FailureReason::MaxAttempts);
    }
    if seen.disabled {
        return Gate::HandBack { after: None };
    }
    if let Some(left) = seen.pause_left.filter(|left| *left > Duration::zero()) {
        // The store fails it instead if that is past its retry horizon.
        return Gate::HandBack { after: Some(left) };
    }
    if seen.lease_left < seen.lease_needed {
        return Gate::HandBack { after: None };
    }
    Gate::Send
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
