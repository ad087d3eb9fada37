//! Tasks an operator changed (cancelled, moved, erased) while this process
//! may hold them claimed and unsent, as the listener hears of them. The
//! delivery asks right before its request (`Consumer::change_heard`): a
//! task found here goes back unsent, and the change is applied by the
//! settle instead of sending it. Without a listener nothing is heard, and
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

    /// Whether `task` changed since it was heard of; forgets it.
    pub fn take(&self, task: TaskId) -> bool {
        self.heard.borrow_mut().remove(&task).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_taken_once_and_old_ones_are_forgotten() {
        let changed = ChangedTasks::default();
        let (a, b) = (TaskId::generate(), TaskId::generate());
        changed.heard(a, Duration::from_secs(60));
        assert!(changed.take(a));
        assert!(!changed.take(a), "taken once");
        changed.heard(a, Duration::from_secs(60));
        // Hearing of another with nothing kept forgets the first.
        changed.heard(b, Duration::ZERO);
        assert!(!changed.take(a));
        assert!(changed.take(b));
    }
}
