//! The destinations this process has read, kept for the sends that follow,
//! so a delivery needs no read of its own.
//!
//! A destination's URL and signing secret never change once registered.
//! What does change, its pause, is announced by NOTIFY when it commits: the
//! claimer's listener forgets the destination at once (the next send reads
//! the row, which has the pause) and the supervisor holds it in
//! `Shared::pauses`. A reading is therefore trusted only while the listener
//! is connected, and for at most [`TRUSTED_FOR`] even then. Should a
//! notification be lost without the connection noticing, little rides on
//! it: a claim never takes a paused destination's tasks, so only the tasks
//! this process claimed before the pause began (held at most a fifth of a
//! lease before they are sent or handed back) could miss it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::domain::{DestinationId, SendTarget};

/// How long a reading is trusted while the listener is connected: long
/// enough that a region of thousands of destinations, each sent a few
/// times a minute, rarely reads one again.
pub const TRUSTED_FOR: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Default)]
pub struct Targets {
    known: Rc<RefCell<HashMap<DestinationId, (SendTarget, Instant)>>>,
    listening: Rc<Cell<bool>>,
}

impl Targets {
    /// The destination as last read, when that reading is still trusted.
    /// Its pause is left out: the caller asks `Shared::pauses`.
    pub fn get(&self, id: &DestinationId) -> Option<SendTarget> {
        if !self.listening.get() {
            return None;
        }
        let known = self.known.borrow();
        let (target, read_at) = known.get(id)?;
        (read_at.elapsed() < TRUSTED_FOR).then(|| target.clone())
    }

    /// Keeps a reading taken right now (only while listening: a reading
    /// taken without would not hear of a pause committed after it).
    pub fn keep(&self, target: &SendTarget) {
        if !self.listening.get() {
            return;
        }
        let kept = SendTarget {
            pause_left: None,
            ..target.clone()
        };
        self.known
            .borrow_mut()
            .insert(kept.destination.id.clone(), (kept, Instant::now()));
    }

    /// The destination changed (a pause committed): read it again.
    pub fn forget(&self, id: &DestinationId) {
        self.known.borrow_mut().remove(id);
    }

    /// Whether pauses are being heard of as they commit. Losing the
    /// listener forgets everything, since what happened meanwhile is
    /// unknown.
    pub fn set_listening(&self, listening: bool) {
        if !listening {
            self.known.borrow_mut().clear();
        }
        self.listening.set(listening);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use remit::domain::{Destination, Region};

    fn target(id: &str) -> SendTarget {
        SendTarget {
            destination: Destination {
                id: DestinationId::new(id).unwrap(),
                region: Region::EU,
                url: "https://example.com/hook".parse().unwrap(),
                has_signing_secret: false,
                enabled: true,
                paused_until: None,
            },
            signing_secret: None,
            pause_left: Some(chrono::Duration::seconds(5)),
        }
    }

    #[test]
    fn a_reading_is_trusted_only_while_listening_and_until_forgotten() {
        let targets = Targets::default();
        let crm = target("crm");
        let id = &crm.destination.id;
        targets.keep(&crm);
        assert!(targets.get(id).is_none(), "not kept while deaf");

        targets.set_listening(true);
        targets.keep(&crm);
        let kept = targets.get(id).unwrap();
        assert_eq!(kept.pause_left, None, "the pause is asked elsewhere");
        assert_eq!(kept.destination, crm.destination);

        targets.forget(id);
        assert!(targets.get(id).is_none());

        targets.keep(&crm);
        targets.set_listening(false);
        targets.set_listening(true);
        assert!(targets.get(id).is_none(), "losing the listener forgets");
    }
}
