//! Handing claimed tasks back to the database unsent (not
//! counted as an attempt): in the background, detached from any actor so
//! that a stopping actor cannot cancel them, retried while the lease is
//! still this process's to give, and counted once the store has them.

use remit::domain::FailureReason;
use remit::store::{Leases, TransitionOutcome};
use std::time::Duration;

use slog::{info, warn};

use super::super::shared::messages::{Delivered, Work};
use super::super::shared::Shared;
use super::retry;

/// Releases tasks in the background, detached from any actor so that a
/// stopping actor cannot cancel them; each frees its slot in memory once
/// the database has it back.
pub fn hand_back(shared: &Shared, tasks: Vec<Work>, after: Option<Duration>) {
    hand_back_each(
        shared,
        tasks.into_iter().map(|work| (work, after)).collect(),
    );
}

/// As [`hand_back`], each task due again after a delay of its own.
pub fn hand_back_each(shared: &Shared, tasks: Vec<(Work, Option<Duration>)>) {
    for (work, after) in tasks {
        // Saturates: a wait too long for chrono is as good as forever.
        let after = after.map(|d| chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX));
        let shared = shared.clone();
        actix_rt::spawn(async move {
            let lease = work.claimed.lease();
            // Retried while the lease is still this process's to give.
            let deadline = work
                .claimed_at
                .checked_add(shared.lease().saturating_sub(shared.finish_margin()))
                .unwrap_or(work.claimed_at);
            let handed_back = retry::until(
                deadline,
                || shared.store.hand_back(&lease, after),
                |e| {
                    warn!(shared.log, "hand-back failed; trying again";
                          "task" => %lease.task_id, "error" => %remit::error_chain(e));
                    true
                },
            )
            .await;
            match handed_back {
                Ok(outcome) => {
                    let log = shared
                        .log
                        .new(slog::o!("task" => lease.task_id.to_string()));
                    count_hand_back(&shared, outcome, &log);
                }
                // The lease expires on its own; nothing is lost.
                Err(e) => warn!(shared.log, "hand-back failed; the lease will expire";
                                "task" => %lease.task_id, "error" => %remit::error_chain(&e)),
            }
            drop(work);
        });
    }
}

/// Counts what the store did with a task handed back.
pub(in crate::runtime) fn count_hand_back(
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
