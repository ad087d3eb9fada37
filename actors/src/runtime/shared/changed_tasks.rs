//! Tasks an operator changed (cancelled, moved, erased) while this process
//! may hold them claimed and unsent, as the listener hears of them. The
//! delivery asks right before its request (`Consumer::change_pending`): a
//! task found here goes back unsent, and the change is applied by the
//! settle instead of sending it; the delivery forgets it once its look
//! has answered. Without a listener nothing is heard, and
//! the change waits for the attempt, as it would for one already sent.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::domain::TaskId;

#[derive(Debug, Clone, Default)]
pub struct ChangedTasks {
    heard: Rc<RefCell<HashMap<TaskId, Instant>>>,
}

impl ChangedTasks {
    /// Notes that `task` changed. What was heard longer than `keep` ago
    /// is forgotten: a task held that long has lost its lease anyway.
    pub fn heard(&self, task: TaskId, keep: Duration) {
        let now = Instant::now();
        let mut heard = self.heard.borrow_mut();
        heard.retain(|_, at| now.duration_since(*at) < keep);
        heard.insert(task, now);
    }

    /// Whether `task` changed since it was heard of.
    pub fn pending(&self, task: TaskId) -> bool {
        self.heard.borrow().contains_key(&task)
    }

    /// Forgets that `task` changed: its delivery has dealt with it.
    pub fn forget(&self, task: TaskId) {
        self.heard.borrow_mut().remove(&task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_stays_until_forgotten_and_old_ones_are_dropped() {
        let changed = ChangedTasks::default();
        let (a, b) = (TaskId::generate(), TaskId::generate());
        changed.heard(a, Duration::from_secs(60));
        assert!(changed.pending(a));
        assert!(changed.pending(a), "asking changes nothing");
        changed.forget(a);
        assert!(!changed.pending(a), "forgotten");
        changed.heard(a, Duration::from_secs(60));
        // Hearing of another with nothing kept forgets the first.
        changed.heard(b, Duration::ZERO);
        assert!(!changed.pending(a));
        assert!(changed.pending(b));
    }
}
