//! Handing a lease back over the model, by `lifecycle::hand_back`.

use chrono::Duration;

use super::store::MemStore;
use crate::domain::Lease;
use crate::store::contract::TransitionOutcome;
use crate::store::rules::lifecycle;

impl MemStore {
    pub(super) fn release_now(&self, lease: &Lease, after: Option<Duration>) -> TransitionOutcome {
        let now = self.now();
        let mut state = self.state.lock();
        let Some(destination) = state.held(lease).map(|t| t.destination_id.clone()) else {
            return state.refused(lease, None);
        };
        let paused_until = state
            .destinations
            .get(&destination)
            .and_then(|d| d.destination.paused_until);
        match state.held(lease) {
            Some(task) => lifecycle::hand_back(task, after, paused_until, now),
            None => state.refused(lease, None),
        }
    }
}
