//! What a sender knows that the store does not, as
//! [`remit::delivery::Consumer`] asks it before a request: the pauses this
//! process holds, what is left of the lease on its own clock (and how it
//! waits on that clock before a store call is tried again), the
//! destinations it keeps or reads in a batch with others, whether its
//! address policy refuses a URL, with the hold that follows a refusal, and
//! whether it heard of an operator's change to the task.

use remit::store::{Destinations, StoreError};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::delivery;
use remit::domain::{DestinationId, SendTarget, TaskId};
use slog::warn;

use super::super::shared::Shared;

/// What this process knows that the store does not: the pauses it holds
/// and how much of the lease is left on its own monotonic clock.
pub(in crate::runtime) struct RuntimeConsumer<'a> {
    pub(in crate::runtime) shared: &'a Shared,
    pub(in crate::runtime) lease_ends: &'a Rc<Cell<Instant>>,
    /// The delivery's logger, for the store calls tried again.
    pub(in crate::runtime) log: &'a slog::Logger,
}

impl delivery::Consumer for RuntimeConsumer<'_> {
    fn facts(&self, target: &SendTarget) -> delivery::Facts {
        let destination = &target.destination.id;
        let held = self.shared.pauses.left(destination).map(chrono_saturating);
        delivery::Facts {
            refused: self
                .shared
                .egress
                .check_url(&target.destination.url)
                .err()
                .map(|refusal| refusal.to_string()),
            pause_left: target.pause_left.max(held),
            // The checks want the configured timeout (and the finish's
            // margin) left; a destination with a longer timeout of its own
            // needs the difference too, so it counts as already spent.
            lease_left: self.lease_left()
                - chrono_saturating(
                    self.shared
                        .send_timeout_for(target)
                        .saturating_sub(self.shared.send_timeout()),
                ),
        }
    }

    fn change_pending(&self, task: TaskId) -> bool {
        self.shared.changed.pending(task)
    }

    fn lease_left(&self) -> chrono::Duration {
        chrono_saturating(
            self.lease_ends
                .get()
                .saturating_duration_since(Instant::now()),
        )
    }

    async fn wait(&self, call: &'static str, error: &StoreError, wait: Duration) {
        warn!(self.log, "a store call failed; trying again"; "call" => call,
              "error" => %remit::error_chain(error));
        actix_rt::time::sleep(wait).await;
    }

    /// A copy kept while listening, or else the row read right now
    /// together with whatever other deliveries ask for at the same moment
    /// (which carries the row's pause as well). `None` leaves the read to
    /// the delivery step, which reads the row on its own: the destination
    /// is gone (the step says so), or the batch failed (the step's own read
    /// then fails or is tried again as any read before a request is).
    async fn known_target(&self, destination: &DestinationId) -> Option<SendTarget> {
        if let Some(kept) = self.shared.targets.get(destination) {
            return Some(kept);
        }
        let shared = self.shared;
        let target = shared
            .targets
            .read(&shared.store, &shared.log, destination)
            .await
            .ok()??;
        shared.targets.keep(&target);
        Some(target)
    }
}

/// A destination this process's address policy refuses: its tasks are
/// held here for [`delivery::REFUSED_HAND_BACK`] (each handed back unsent,
/// not failed), and the row says why, for `remit status`. The record is
/// best effort: the hand-back is what keeps the promise.
pub(in crate::runtime) async fn hold_refused(
    shared: &Shared,
    destination: &DestinationId,
    why: &str,
    log: &slog::Logger,
) {
    shared.stats.metrics.refused(destination);
    // Held already: the hold is not extended, so it lapses after its
    // minute and the next refusal records itself again, which keeps the
    // row's time (what `remit status` lists by) current while it lasts.
    if shared.pauses.left(destination).is_some() {
        return;
    }
    let hold = delivery::REFUSED_HAND_BACK.to_std().unwrap_or_default();
    shared.pauses.hold(destination, hold);
    warn!(log, "the address policy refuses this destination; its tasks are held";
          "why" => why, "hold_ms" => hold.as_millis());
    if let Err(e) = shared.store.mark_refused(destination, why.to_owned()).await {
        warn!(log, "could not record the refusal"; "error" => %remit::error_chain(&e));
    }
}

/// A std duration as chrono's, saturating (chrono's range is smaller).
pub(in crate::runtime) fn chrono_saturating(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}
