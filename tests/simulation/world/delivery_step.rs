//! The delivery step's surroundings in the simulation: the consumer it runs
//! with (pauses it learned, its lease, the world's clock to wait on), the
//! store faults armed around it, and the checks of what it left behind.

use remit::store::{Clock, Schedule, StoreError, TransitionOutcome};
use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use remit::delivery::{Consumer, Facts, Stop};
use remit::domain::{ClaimedTask, DestinationId, SendTarget, Task, TaskState};

use super::faults::{Fault, Fired};
use super::{SimStore, World, FINISH_MARGIN, SEND_TIMEOUT};

/// What the faults armed around a delivery step leave it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Outage {
    faults: usize,
    /// Few enough faults, and lease enough left, that the step must
    /// outlast them.
    short: bool,
    lease_left: Duration,
}

impl<S: SimStore> World<S> {
    /// Arms the store faults the next delivery step meets: mostly none; a
    /// few (before or after a call) in its reads and in its write, which
    /// it must outlast; now and then an outage longer than the lease.
    pub(super) fn arm_faults(&mut self, claimed: &ClaimedTask) -> Outage {
        let (reads, writes) = match self.rng.random_range(0..100) {
            0..75 => (0, 0),
            75..95 => (self.rng.random_range(0..=3), self.rng.random_range(0..=3)),
            95..98 => (40, 0),
            _ => (self.rng.random_range(0..=1), 40),
        };
        let (read_faults, write_faults) = (self.faults(reads), self.faults(writes));
        self.store.arm(read_faults, write_faults);
        // At most three faults in a row cost 350 ms of waits.
        let lease_left = claimed.lease_expires_at - self.now();
        let room = Duration::seconds(SEND_TIMEOUT + FINISH_MARGIN + 2);
        Outage {
            faults: reads + writes,
            short: reads <= 3 && writes <= 3 && lease_left >= room,
            lease_left,
        }
    }

    /// `n` faults, each before or after its call.
    pub(super) fn faults(&mut self, n: usize) -> Vec<Fault> {
        (0..n)
            .map(|_| match self.rng.random_bool(0.5) {
                true => Fault::Before,
                false => Fault::After,
            })
            .collect()
    }

    /// A delivery step that gave up on a store fault: as the runtime's
    /// sender, the consumer lets the task go (its hand-back of it may fail
    /// as well; the lease then runs out). Only an outage the lease could
    /// not outlast may end a step this way.
    pub(super) fn gave_up(&mut self, claimed: &ClaimedTask, outage: Outage, error: &StoreError) {
        self.totals.gave_up += 1;
        check!(
            self,
            !outage.short,
            "a short store fault ({} calls) ended the delivery step of {} with \"{error}\" though {} of its lease was left",
            outage.faults,
            claimed.task.id,
            outage.lease_left
        );
    }

    /// A task stopped unsent: the store has it back (or ended), and with no
    /// answer lost the step reports what its one write did.
    pub(super) async fn check_stop(
        &mut self,
        claimed: &ClaimedTask,
        before: &Task,
        outcome: TransitionOutcome,
        fired: Fired,
    ) {
        let id = claimed.task.id;
        let after = self.store.task(id).await.unwrap().unwrap();
        check!(
            self,
            !ours(&after, claimed),
            "{id} stopped unsent ({outcome:?}) but still held under its lease"
        );
        if ours(before, claimed) && fired.lost_answers == 0 {
            check!(
                self,
                matches!(
                    outcome,
                    TransitionOutcome::Applied | TransitionOutcome::PastHorizon
                ),
                "{id} was held and stopped unsent, yet the step reports {outcome:?}"
            );
        }
    }
}

/// Whether `row` is held under the claim's lease.
pub(super) fn ours(row: &Task, claimed: &ClaimedTask) -> bool {
    row.state == TaskState::Leased && row.lease_token == Some(claimed.lease_token)
}

pub(super) fn stop_outcome(stop: &Stop) -> TransitionOutcome {
    match stop {
        Stop::Unreadable { outcome, .. }
        | Stop::Refused { outcome, .. }
        | Stop::Changed { outcome }
        | Stop::Checks { outcome, .. } => *outcome,
    }
}

/// What a simulated consumer knows that the store does not, as the
/// runtime's sender does: the pauses it learned from its own 429s, and its
/// lease's expiry, on the world's clock, on which it also waits before a
/// store call is tried again.
pub(super) struct SimConsumer<'a> {
    pub(super) pauses: &'a HashMap<DestinationId, DateTime<Utc>>,
    pub(super) clock: &'a Clock,
    pub(super) lease_expires_at: DateTime<Utc>,
}

impl SimConsumer<'_> {
    fn now(&self) -> DateTime<Utc> {
        self.clock.now_param().unwrap()
    }
}

impl Consumer for SimConsumer<'_> {
    fn facts(&self, target: &SendTarget) -> Facts {
        let now = self.now();
        let known = self
            .pauses
            .get(&target.destination.id)
            .map(|until| *until - now);
        Facts {
            refused: None,
            pause_left: [target.pause_left, known]
                .into_iter()
                .flatten()
                .filter(|left| *left > Duration::zero())
                .max(),
            lease_left: self.lease_left(),
        }
    }

    fn lease_left(&self) -> Duration {
        self.lease_expires_at - self.now()
    }

    /// Waits on the fake clock: the whole world moves on meanwhile.
    async fn wait(&self, _call: &'static str, _error: &StoreError, wait: std::time::Duration) {
        self.clock.advance(Duration::from_std(wait).unwrap());
    }
}
