//! How one delivery ended, for the sender's bookkeeping, and what a task
//! handed back counts as once the store has answered.

use remit::domain::FailureReason;
use remit::store::TransitionOutcome;
use slog::{info, warn};

use super::Shared;

/// How one delivery ended, for the sender's bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    /// The next state is committed (or the lease had moved on).
    Finished,
    /// Handed back unsent: the lease was too short, the destination is
    /// paused, or the payload cannot be opened here.
    HandedBack,
}

/// Counts what the store did with a task handed back.
pub(super) fn count_hand_back(
    shared: &Shared,
    outcome: TransitionOutcome,
    log: &slog::Logger,
) -> Delivered {
    match outcome {
        TransitionOutcome::Applied => {
            shared.stats.metrics.released();
            Delivered::HandedBack
        }
        TransitionOutcome::PastHorizon => {
            shared
                .stats
                .metrics
                .failed(&FailureReason::RetryHorizon.code());
            warn!(log, "nothing could happen before the retry horizon; failed unsent";
                  "outcome" => "failed", "reason" => "retry_horizon");
            Delivered::Finished
        }
        TransitionOutcome::Fenced | TransitionOutcome::NotFound => {
            let why = if outcome == TransitionOutcome::Fenced {
                "fenced"
            } else {
                "not_found"
            };
            info!(log, "hand-back refused: the lease had moved on"; "outcome" => why);
            Delivered::HandedBack
        }
    }
}
