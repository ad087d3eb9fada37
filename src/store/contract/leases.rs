//! `Leases`: a task's way through a consumer: the claim that leases due
//! rows (with its fencing token), the wait until more fall due, and every
//! end of a lease (finish, fail, abandon, hand back) or its extension,
//! each fenced by the lease it ends.

use std::future::Future;

use chrono::Duration;

use super::calls::ClaimRequest;
use super::calls::Finish;
use super::calls::Finished;
use super::calls::TransitionOutcome;
use super::error::StoreError;
use crate::domain::{AttemptRecord, ClaimedTask, DestinationId, FailureReason, Lease, Region};
use crate::policy::Decision;

pub trait Leases: Sync {
    /// How long from the store's now until a claim of the region could next
    /// find work it cannot find now (`next_due.rs`): rows claimable already
    /// were left out by the claim that came back empty, so they do not
    /// count; `None` when nothing is coming (no live rows, or only rows of
    /// disabled destinations, or only rows left out now). A paused
    /// destination's rows count from the pause's end. The wait is measured on the store's clock, so a caller
    /// that sleeps for it wakes when the claim's own clock check passes,
    /// whatever its own clock says. It reads every destination of the
    /// region with live rows, as a claim that finds nothing does.
    fn next_due(
        &self,
        region: Region,
    ) -> impl Future<Output = Result<Option<Duration>, StoreError>> + Send;

    /// Leases due rows and expired leases of one region in one statement.
    fn claim_due(
        &self,
        request: &ClaimRequest,
    ) -> impl Future<Output = Result<Vec<ClaimedTask>, StoreError>> + Send;

    fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Ends an attempt whose outcome is unknown (the request may have gone
    /// out): it counts, is logged as `abandoned`, and the task is due again.
    fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Gives the lease back without counting an attempt, eligible again
    /// about `after` from the store's now when given (the store's clock, not
    /// the caller's; an estimate, so never past the retry horizon), and never
    /// before its destination's pause ends. When nothing can happen before
    /// the horizon (it has passed, or the destination's pause outlasts it),
    /// the task fails with `retry_horizon` and the answer is `PastHorizon`.
    fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Pushes the lease's expiry to `by` from now (never earlier than it is).
    fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Applies one policy decision: a batch of one.
    fn finish(
        &self,
        lease: &Lease,
        destination: &DestinationId,
        decision: &Decision,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send {
        let one = Finish {
            lease: lease.clone(),
            destination: destination.clone(),
            decision: decision.clone(),
        };
        async move {
            let mut outcomes = self.finish_many(std::slice::from_ref(&one)).await?.outcomes;
            outcomes
                .pop()
                .ok_or_else(|| StoreError::Thread("no answer for the finish".into()))
        }
    }

    /// Applies policy decisions: each the matching finish, and the
    /// destination pause it asks for, both set as the decision's delays
    /// from the store's now (a lease owner's clock only measured how long the
    /// receiver asked for). The answers come back in order, one per
    /// finish, and fencing stays per row (a stale lease is refused on its
    /// own and changes nothing). A store with transactions commits the
    /// whole batch, pauses included, at once; when it fails, nothing of
    /// the batch is written.
    ///
    /// It tells also which destinations the batch disabled. Each applied finish counts toward its destination's
    /// failure streak (`policy::Health`): a failure grows it, and the one
    /// that makes it long enough in both count and time (the destination's
    /// own thresholds, or the store's [`DisableRule`](crate::policy::DisableRule))
    /// disables the destination in the same transaction; a success ends
    /// it, and writes nothing when there is none. A batch's finishes count
    /// in the batch's order, exactly as if each came alone (see
    /// `store/rules/health.rs`); each disabled destination is reported as the
    /// whole batch left it.
    fn finish_many(
        &self,
        batch: &[Finish],
    ) -> impl Future<Output = Result<Finished, StoreError>> + Send;
}
