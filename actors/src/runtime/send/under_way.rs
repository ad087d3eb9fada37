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

    /// Tells the request's throttle, whatever became of the places.
    pub(super) fn tell(&self, wake: Wake) {
        self.throttle.do_send(wake);
    }

    /// Gives the places back without a word to the throttle (the caller
    /// has told it already).
    pub(super) fn release(&self) {
        let places = self.places.borrow_mut().take();
        drop(places);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use actix::prelude::*;
    use tokio::sync::Semaphore;

    use super::*;

    /// A throttle stand-in that counts the wakes it hears.
    #[derive(Default)]
    struct Counting(u32);

    impl Actor for Counting {
        type Context = Context<Self>;
    }

    impl Handler<Wake> for Counting {
        type Result = ();

        fn handle(&mut self, _: Wake, _: &mut Context<Self>) {
            self.0 += 1;
        }
    }

    /// The wakes heard so far: answered after every message sent before it
    /// (a mailbox is first in, first out).
    #[derive(Message)]
    #[rtype(result = "u32")]
    struct Heard;

    impl Handler<Heard> for Counting {
        type Result = u32;

        fn handle(&mut self, _: Heard, _: &mut Context<Self>) -> u32 {
            self.0
        }
    }

    fn places(destination: &Arc<Semaphore>, process: &Arc<Semaphore>) -> InFlight {
        InFlight {
            destination: destination.clone().try_acquire_owned().unwrap(),
            process: process.clone().try_acquire_owned().unwrap(),
        }
    }

    #[actix_rt::test]
    async fn the_places_go_back_once_with_one_wake_whoever_holds_a_copy() {
        let (destination, process) = (Arc::new(Semaphore::new(1)), Arc::new(Semaphore::new(1)));
        let throttle = Counting::default().start();
        let under_way = UnderWay::new(places(&destination, &process), throttle.clone().recipient());
        let held = under_way.clone();
        assert_eq!(destination.available_permits(), 0);
        assert_eq!(process.available_permits(), 0);

        // The answer is in: both places are free while the sender's copy
        // (`held`) still lives, and the throttle hears of it once.
        under_way.over();
        under_way.over();
        assert_eq!(destination.available_permits(), 1);
        assert_eq!(process.available_permits(), 1);
        held.release();
        assert_eq!(throttle.send(Heard).await.unwrap(), 1);
    }

    #[actix_rt::test]
    async fn released_or_dropped_without_an_answer_the_places_go_back_unannounced() {
        let (destination, process) = (Arc::new(Semaphore::new(1)), Arc::new(Semaphore::new(1)));
        let throttle = Counting::default().start();

        let released = UnderWay::new(places(&destination, &process), throttle.clone().recipient());
        released.release();
        assert_eq!(destination.available_permits(), 1);
        assert_eq!(process.available_permits(), 1);

        let dropped = UnderWay::new(places(&destination, &process), throttle.clone().recipient());
        let copy = dropped.clone();
        drop(dropped);
        assert_eq!(
            destination.available_permits(),
            0,
            "a copy still holds them"
        );
        drop(copy);
        assert_eq!(destination.available_permits(), 1);
        assert_eq!(process.available_permits(), 1);
        assert_eq!(throttle.send(Heard).await.unwrap(), 0);
    }
}
