//! Destinations this process holds until some time, on its own monotonic
//! clock. Two sets of them:
//! - pauses: from a 429 it received itself (known before the finish
//!   commits) and from pauses other processes committed (learned by
//!   NOTIFY). Every request checks here right before it starts, together
//!   with the destination's row, which stays the authority;
//! - busy destinations: at their in-flight cap, or out of tokens, so that
//!   claimed work would only be handed back. The claimer skips both.
//!
//! Holds are kept as "this long from when we learned it" rather than as
//! wall-clock instants, so a host whose clock is off cannot end one early.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::domain::DestinationId;

#[derive(Debug, Clone, Default)]
pub struct Holds {
    until: Rc<RefCell<HashMap<DestinationId, Instant>>>,
}

impl Holds {
    /// Holds the destination for `left` from now; a later hold wins.
    pub fn hold(&self, destination: &DestinationId, left: Duration) {
        let until = Instant::now().checked_add(left).unwrap_or_else(far_future);
        let mut map = self.until.borrow_mut();
        let entry = map.entry(destination.clone()).or_insert(until);
        *entry = (*entry).max(until);
    }

    /// Holds the destination for `left` from now, whatever held it before
    /// (zero ends the hold): for a hold its owner works out afresh each
    /// time, as a throttle does from what it has queued.
    pub fn set(&self, destination: &DestinationId, left: Duration) {
        if left.is_zero() {
            self.release(destination);
            return;
        }
        let until = Instant::now().checked_add(left).unwrap_or_else(far_future);
        self.until.borrow_mut().insert(destination.clone(), until);
    }

    /// How long until the first hold ends, if any is held.
    pub fn next_end(&self) -> Option<Duration> {
        let now = Instant::now();
        self.until
            .borrow()
            .values()
            .map(|until| until.saturating_duration_since(now))
            .min()
    }

    /// Ends the destination's hold now (its limits changed: what held it
    /// may no longer).
    pub fn release(&self, destination: &DestinationId) {
        self.until.borrow_mut().remove(destination);
    }

    /// The destinations held now.
    pub fn held_now(&self) -> Vec<DestinationId> {
        let now = Instant::now();
        let mut map = self.until.borrow_mut();
        map.retain(|_, until| *until > now);
        map.keys().cloned().collect()
    }

    /// What is left of the destination's hold, if it is held.
    pub fn left(&self, destination: &DestinationId) -> Option<Duration> {
        let mut map = self.until.borrow_mut();
        let until = *map.get(destination)?;
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            map.remove(destination);
            return None;
        }
        Some(left)
    }
}

/// About a century ahead: far enough for any pause, and it never overflows.
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_pause_wins_and_an_ended_one_is_gone() {
        let pauses = Holds::default();
        let id = DestinationId::new("crm").expect("a valid id");
        assert_eq!(pauses.left(&id), None);
        pauses.hold(&id, Duration::from_secs(60));
        pauses.hold(&id, Duration::from_secs(1));
        assert!(pauses.left(&id).expect("paused") > Duration::from_secs(59));
        pauses.hold(&id, Duration::MAX);
        assert!(pauses.left(&id).is_some(), "a huge pause saturates");
        let other = DestinationId::new("other").expect("a valid id");
        pauses.hold(&other, Duration::ZERO);
        assert_eq!(pauses.left(&other), None);
        assert_eq!(pauses.held_now(), vec![id]);
    }

    #[test]
    fn a_set_hold_replaces_the_one_before_and_zero_ends_it() {
        let busy = Holds::default();
        let id = DestinationId::new("crm").expect("a valid id");
        busy.set(&id, Duration::from_secs(30));
        busy.set(&id, Duration::from_secs(2));
        let left = busy.left(&id).expect("held");
        assert!(left <= Duration::from_secs(2), "shortened: {left:?}");
        assert!(busy.next_end().expect("one hold") <= Duration::from_secs(2));
        busy.set(&id, Duration::ZERO);
        assert_eq!(busy.left(&id), None);
        assert_eq!(busy.next_end(), None);
    }
}
