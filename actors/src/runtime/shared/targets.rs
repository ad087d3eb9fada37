//! The destinations this process has read, kept for the sends that follow,
//! so a delivery needs no read of its own, and the batched reads of those
//! it has no trusted copy of. A destination is kept while it has work here:
//! its reading is forgotten when its throttle is evicted.
//!
//! A destination's URL never changes once registered. What does change,
//! its pause and its secrets (a rotation), is announced by NOTIFY when it
//! commits: the claimer's listener forgets the destination at once (the
//! next send reads the row, which has the pause and the new secret) and the
//! supervisor holds the pause in `Shared::pauses`. A kept secret that ends
//! stops signing at its end on its own (the sender checks each secret's end
//! at the time of sending). A reading is therefore trusted only while the listener
//! is proven alive (its connection answered a ping or came up within
//! [`PROOF_LASTS`]), and for at most [`TRUSTED_FOR`] even then. Should a
//! notification be lost without the connection noticing, little rides on
//! it: a claim never takes a paused destination's tasks, so only the tasks
//! this process claimed before the pause began (held at most a fifth of a
//! lease before they are sent or handed back) could miss it.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::domain::{DestinationId, SendTarget};
use remit::store::Database;

use super::batcher::BatchError;
use super::reads::{self, Reads};

/// How long a reading is trusted while the listener is connected and its
/// destination keeps having work here: long enough that a destination sent
/// to steadily is rarely read again.
pub const TRUSTED_FOR: Duration = Duration::from_secs(60);

/// How long the listener counts as alive after its connection last proved
/// itself (it pings every two seconds, so a live one renews this long
/// before it runs out).
pub const PROOF_LASTS: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Default)]
pub struct Targets {
    known: Rc<RefCell<HashMap<DestinationId, (SendTarget, Instant)>>>,
    /// Until when the listener counts as alive; `None` while it is not.
    alive_until: Rc<Cell<Option<Instant>>>,
    /// Reads rows for the deliveries, many in a statement; started with
    /// the first read.
    reads: Rc<OnceCell<Reads>>,
}

impl Targets {
    /// Whether the listener proved itself alive recently. A proof that ran
    /// out forgets everything, as losing the listener does: what happened
    /// meanwhile is unknown.
    fn listening(&self) -> bool {
        match self.alive_until.get() {
            Some(until) if Instant::now() < until => true,
            Some(_) => {
                self.set_listening(false);
                false
            }
            None => false,
        }
    }

    /// The destination as last read, when that reading is still trusted.
    /// Its pause is left out: the caller asks `Shared::pauses`.
    pub fn get(&self, id: &DestinationId) -> Option<SendTarget> {
        if !self.listening() {
            return None;
        }
        let known = self.known.borrow();
        let (target, read_at) = known.get(id)?;
        (read_at.elapsed() < TRUSTED_FOR).then(|| target.clone())
    }

    /// Keeps a reading taken right now (only while listening: a reading
    /// taken without would not hear of a pause committed after it).
    pub fn keep(&self, target: &SendTarget) {
        if !self.listening() {
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

    /// Reads the destination's row now, in one statement with the other
    /// reads asked for meanwhile. `None`: the destination does not exist.
    pub async fn read(
        &self,
        store: &Database,
        log: &slog::Logger,
        id: &DestinationId,
    ) -> Result<Option<SendTarget>, BatchError> {
        let reads = self
            .reads
            .get_or_init(|| reads::start(store.clone(), log.clone()))
            .clone();
        reads.call(id.clone()).await
    }

    /// The destination changed (a pause committed), or its throttle was
    /// evicted: read it again.
    pub fn forget(&self, id: &DestinationId) {
        self.known.borrow_mut().remove(id);
    }

    /// Whether pauses are being heard of as they commit (a listener that
    /// just connected is alive). Losing the listener forgets everything,
    /// since what happened meanwhile is unknown.
    pub fn set_listening(&self, listening: bool) {
        if listening {
            self.proven_alive();
        } else {
            self.known.borrow_mut().clear();
            self.alive_until.set(None);
        }
    }

    /// The listener's connection just answered: it is alive for a while.
    pub fn proven_alive(&self) {
        self.alive_until
            .set(Instant::now().checked_add(PROOF_LASTS));
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
                health: Default::default(),
                settings: Default::default(),
            },
            signing_secrets: Vec::new(),
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

    #[test]
    fn a_reading_is_trusted_only_while_the_listener_is_proven_alive() {
        let targets = Targets::default();
        let crm = target("crm");
        let id = &crm.destination.id;
        targets.set_listening(true);
        targets.keep(&crm);
        assert!(targets.get(id).is_some());
        // The last proof ran out: nothing is trusted, and nothing kept.
        targets
            .alive_until
            .set(Instant::now().checked_sub(Duration::from_millis(1)));
        assert!(targets.get(id).is_none(), "a lapsed proof is not trusted");
        targets.proven_alive();
        assert!(targets.get(id).is_none(), "a lapsed proof forgets");
        targets.keep(&crm);
        assert!(targets.get(id).is_some());
    }
}
