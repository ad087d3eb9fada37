//! How one delivery ended, for the sender's bookkeeping, counted and
//! logged (a delivery, a retry and a hand-back at `debug`, and into the
//! destination's periodic summary; a failure or a fenced finish at
//! `warn`): a task sent and finished (`report`), stopped before its request
//! (`stopped`); a hand-back is counted where it is made
//! (`finish::hand_back`).

use remit::delivery::Stop;
use remit::domain::{AttemptOutcome, FailureReason, Task};
use remit::policy::{Decision, Gate, Transition};
use remit::store::TransitionOutcome;
use slog::{debug, error, warn};

use super::super::finish::hand_back::count_hand_back;
use super::super::shared::messages::Delivered;
use super::super::shared::Shared;

/// Counts and logs a task that was not sent; the store has it already.
pub(in crate::runtime) fn stopped(
    shared: &Shared,
    stop: &Stop,
    task: &Task,
    log: &slog::Logger,
) -> Delivered {
    let stats = &shared.stats;
    let outcome = match stop {
        Stop::Unreadable {
            error,
            failed: true,
            outcome: TransitionOutcome::Applied,
        } => {
            let reason = FailureReason::PayloadUnreadable.code();
            stats.metrics.failed(&reason);
            stats
                .metrics
                .attempt(&task.destination_id, AttemptOutcome::Failed);
            error!(log, "no key opens the payload and its retry horizon has passed; failed unsent";
                   "outcome" => "failed", "reason" => reason, "error" => %error);
            return Delivered::Finished;
        }
        Stop::Unreadable { error, outcome, .. } => {
            let until = if error.another_process_may_open() {
                "a process with its key takes it"
            } else {
                "its retry horizon, when it fails"
            };
            error!(log, "cannot open the payload; handing the task back";
                   "error" => %error, "until" => until);
            *outcome
        }
        Stop::Refused { outcome, .. } => *outcome,
        Stop::Changed { outcome } => {
            stats.summary.handed_back(&task.destination_id);
            debug!(log, "handing back unsent: an operator changed the task");
            *outcome
        }
        Stop::Checks {
            gate,
            pause_left,
            outcome,
        } => {
            if let (Gate::Fail(reason), TransitionOutcome::Applied) = (gate, outcome) {
                stats.metrics.failed(&reason.code());
                stats
                    .metrics
                    .attempt(&task.destination_id, AttemptOutcome::Failed);
                stats.summary.failed(&task.destination_id);
                warn!(log, "failed unsent"; "outcome" => "failed", "reason" => reason.code());
                return Delivered::Finished;
            }
            if let Gate::HandBack { after } = gate {
                stats.summary.handed_back(&task.destination_id);
                debug!(log, "handing back unsent"; "paused" => pause_left.is_some(),
                       "after_ms" => after.map(|a| a.num_milliseconds()));
            }
            *outcome
        }
    };
    count_hand_back(shared, outcome, log)
}

/// Counts and logs what the finish did.
pub(in crate::runtime) fn report(
    shared: &Shared,
    log: &slog::Logger,
    task: &Task,
    outcome: TransitionOutcome,
    decision: &Decision,
) {
    let status = decision.record.http_status;
    let stats = &shared.stats;
    let metrics = &stats.metrics;
    let destination = &task.destination_id;
    if status.is_some() || decision.record.transport_error.is_some() {
        metrics.response(destination, status);
    }
    match (outcome, &decision.transition) {
        (TransitionOutcome::Applied, Transition::Deliver) => {
            metrics.attempt(destination, AttemptOutcome::Delivered);
            // On the store's side of the exchange: the answer's arrival.
            if let Some(received) = decision.record.received_at {
                if task.attempts_before_replay == 0 {
                    metrics.delivered_after_deadline(received - task.not_before);
                }
            }
            stats.summary.delivered(destination);
            debug!(log, "delivered"; "status" => status, "outcome" => "delivered");
        }
        (TransitionOutcome::Applied, Transition::RetryWait { available_at }) => {
            metrics.attempt(destination, AttemptOutcome::RetryWait);
            let error = decision.record.transport_error.as_deref();
            stats.summary.retried(destination, status, error);
            debug!(log, "will retry"; "status" => status, "outcome" => "retry_wait",
                   "error" => error,
                   "retry_after" => decision.record.retry_after_raw.as_deref(),
                   "available_at" => %available_at);
        }
        (TransitionOutcome::Applied, Transition::Fail(reason)) => {
            metrics.attempt(destination, AttemptOutcome::Failed);
            metrics.failed(&reason.code());
            stats.summary.failed(destination);
            warn!(log, "failed"; "status" => status, "outcome" => "failed", "reason" => reason.code());
        }
        (TransitionOutcome::Fenced, _) => {
            metrics.attempt(destination, AttemptOutcome::Fenced);
            metrics.fenced(destination);
            stats.summary.fenced(destination);
            warn!(log, "lease was lost before the finish; another consumer owns the task";
                  "status" => status, "outcome" => "fenced");
        }
        (TransitionOutcome::NotFound, _) => {
            warn!(log, "task vanished before the finish"; "outcome" => "not_found");
        }
        // Only a hand-back answers this; a finish never does.
        (TransitionOutcome::PastHorizon, _) => {}
    }
}
