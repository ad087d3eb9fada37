//! What a consumer of the delivery step brings: what it knows of a
//! destination right before a request ([`Facts`]), and its clock and its
//! reads ([`Consumer`]).

use std::future::Future;

use chrono::Duration;

use crate::domain::{DestinationId, SendTarget, TaskId};
use crate::store::StoreError;

/// What a consumer knows of a task's destination right before its
/// request, beside the row itself: the facts the decision before a request
/// takes (`judge`), so that decision reads nothing and asks nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// Why the consumer's address policy refuses the destination's URL,
    /// when it does.
    pub refused: Option<String>,
    /// What is left of the longest pause the consumer knows of for the
    /// destination, the row's included (its own 429s count before their
    /// finish commits).
    pub pause_left: Option<Duration>,
    /// What is left of its lease on the task, by its own clock.
    pub lease_left: Duration,
}

/// What a consumer knows that the store does not, and its clock. Every
/// method only reads: the decision takes these facts and answers, and
/// what the consumer learns from it (a row's pause, a row read, a change
/// dealt with) it applies itself once [`before_request`](super::before_request)
/// has answered.
pub trait Consumer {
    /// What it knows of `target`'s destination right now, the row (or its
    /// trusted copy) just read; the row's pause is among what it takes in.
    /// It changes nothing.
    fn facts(&self, target: &SendTarget) -> Facts;

    /// What is left of its lease on the task, by its own clock: how long a
    /// store call may still be tried again.
    fn lease_left(&self) -> Duration;

    /// Waits `wait` on the same clock before a store call that failed with
    /// `error` is tried again (`call` names it, for a log).
    fn wait(
        &self,
        call: &'static str,
        error: &StoreError,
        wait: std::time::Duration,
    ) -> impl Future<Output = ()>;

    /// The destination as this consumer last read it, when it still trusts
    /// that reading, or as it reads it right now with other requests' reads
    /// (its pause aside: [`Consumer::facts`] takes the row's pause in
    /// either way). Asked at every try; `None` makes
    /// [`before_request`](super::before_request) read the row.
    fn known_target(
        &self,
        _destination: &DestinationId,
    ) -> impl Future<Output = Option<SendTarget>> {
        std::future::ready(None)
    }

    /// Whether it heard, since the claim, that an operator changed `task`
    /// (a cancel or a move now waiting for this attempt): asked last,
    /// right before the decision, so a task a cancel reached while it
    /// waited in memory goes back unsent and the change is applied. False
    /// when the consumer hears of no changes. It only reads; the consumer
    /// forgets the change once the look has answered.
    fn change_pending(&self, _task: TaskId) -> bool {
        false
    }
}
