//! Handing a lease back over the model, as RELEASE_SQL does.

use chrono::{DateTime, Duration};

use super::{later, MemStore};
use crate::domain::{FailureReason, Lease, TaskState};
use crate::store::TransitionOutcome;

impl MemStore {
    pub(super) fn release_now(&self, lease: &Lease, after: Option<Duration>) -> TransitionOutcome {
        let now = self.now();
        let mut state = self.state.lock();
        let Some(destination) = state.held(lease).map(|t| t.destination_id.clone()) else {
            return state.refused(lease, None);
        };
        // As RELEASE_SQL: never due before the destination's pause ends, an
        // estimated delay never past the horizon, and when nothing can
        // happen before the horizon the task fails instead.
        let paused_until = state
            .destinations
            .get(&destination)
            .and_then(|d| d.destination.paused_until);
        let Some(task) = state.held(lease) else {
            return state.refused(lease, None);
        };
        let horizon = task.retry_horizon_at;
        let expired = paused_until.map_or(now, |p| p.max(now)) >= horizon;
        task.state = if expired {
            TaskState::Failed
        } else if task.attempt_count - 1 > task.attempts_before_replay {
            TaskState::RetryWait
        } else {
            TaskState::Pending
        };
        task.attempt_count -= 1;
        task.lease_token = None;
        task.lease_owner = None;
        task.lease_expires_at = None;
        task.available_at = [after.map(|d| later(now, d).min(horizon)), paused_until]
            .into_iter()
            .flatten()
            .fold(task.available_at, DateTime::max);
        if expired {
            task.failure_reason = Some(FailureReason::RetryHorizon.code());
            task.finalized_at = Some(now);
        }
        task.updated_at = now;
        if expired {
            TransitionOutcome::PastHorizon
        } else {
            TransitionOutcome::Applied
        }
    }
}
