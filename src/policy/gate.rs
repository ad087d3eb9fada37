//! Whether a claimed task may be sent now: the rules every consumer applies
//! right before a request, in one place, so the runtime and the simulation
//! run the same ones. Pure: the caller reads the store and its clocks and
//! passes what it saw.

use chrono::{DateTime, Duration, Utc};

use super::RetryPolicy;
use crate::domain::{FailureReason, Task};

/// What a consumer saw right before a request.
#[derive(Debug, Clone, Copy)]
pub struct BeforeSend<'a> {
    pub task: &'a Task,
    /// What is left of the destination's pause: the longer of what the
    /// store's row says (on the store's clock) and what this consumer knows
    /// of (a 429 it got itself, a pause it was told of). `None`: not paused.
    pub pause_left: Option<Duration>,
    /// What is left of the lease, by this consumer's own reckoning.
    pub lease_left: Duration,
    /// What a request needs of the lease: the send timeout plus a margin
    /// for the finish to commit.
    pub lease_needed: Duration,
    /// This consumer's wall clock, only to compare with the retry horizon
    /// (hours or days away, so seconds of error do not matter).
    pub now: DateTime<Utc>,
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
/// that died with it is not sent again; a paused destination holds it until
/// the pause ends; a lease too short for the request and its finish hands it
/// back.
pub fn before_send(seen: &BeforeSend<'_>, policy: &RetryPolicy) -> Gate {
    if seen.task.attempts_since_replay() > policy.max_attempts {
        return Gate::Fail(FailureReason::MaxAttempts);
    }
    if let Some(left) = seen.pause_left.filter(|left| *left > Duration::zero()) {
        return hand_back(seen.task, Some(left), seen.now);
    }
    if seen.lease_left < seen.lease_needed {
        return Gate::HandBack { after: None };
    }
    Gate::Send
}

/// Handing a task back, due again `after` from now: unless that is past its
/// retry horizon, in which case it fails with `retry_horizon`, so a task
/// that keeps being handed back (a payload no process can open, a
/// destination that stays paused) ends instead of looping forever.
pub fn hand_back(task: &Task, after: Option<Duration>, now: DateTime<Utc>) -> Gate {
    let due = match after {
        None => now,
        Some(after) => now
            .checked_add_signed(after)
            .unwrap_or(DateTime::<Utc>::MAX_UTC),
    };
    if due > task.retry_horizon_at {
        return Gate::Fail(FailureReason::RetryHorizon);
    }
    Gate::HandBack { after }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
