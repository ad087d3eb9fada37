//! A request's places under the in-flight caps (its destination's and the
//! process's), from the moment its throttle lets it go until its answer is
//! in. They go back as soon as the exchange is over, not when its outcome
//! commits: the receiver is no longer working on it, and holding them
//! through the finish would leave the next request of the destination
//! waiting on the database rather than on the receiver. The task itself
//! keeps its slot in memory (`Capacity`) until the commit.

use std::cell::RefCell;
use std::rc::Rc;

use actix::Recipient;

use super::super::shared::messages::{InFlight, Wake};

/// Shared by the sender's record of a delivery and the delivery itself;
/// whichever is first gives the places back, and dropping both does too.
#[derive(Debug, Clone)]
pub(super) struct UnderWay {
    places: Rc<RefCell<Option<InFlight>>>,
    throttle: Recipient<Wake>,
}

impl UnderWay {
    pub(super) fn new(places: InFlight, throttle: Recipient<Wake>) -> Self {
        Self {
            places: Rc::new(RefCell::new(Some(places))),
            throttle,
        }
    }

    /// The exchange is over: the places go back, and the throttle hears
    /// of it (it may start its next request). Once only.
    pub(super) fn over(&self) {
        let places = self.places.borrow_mut().take();
        if let Some(places) = places {
            // Told before the places are back, so the throttle never looks
            // idle with this news still on its way.
            self.throttle.do_send(Wake::CHANGED);
            drop(places);
        }
    }

    /// Gives the places back without a word to the throttle (the caller
    /// has told it already).
    pub(super) fn release(&self) {
        let places = self.places.borrow_mut().take();
        drop(places);
    }
}
