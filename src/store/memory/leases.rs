//! `Leases` on the model: the claim (`claim`), the wait until more is
//! due, and every end of a lease by the guard in `state`.

use super::store::MemStore;
use crate::domain::{AttemptRecord, ClaimedTask, FailureReason, Lease, Region};
use crate::store::contract::{
    ClaimRequest, Destinations, Finish, Finished, Leases, Schedule, StoreError, TransitionOutcome,
};
use crate::store::rules::lifecycle;
use crate::store::rules::lifecycle::EndAttempt;
use chrono::Duration;

impl Leases for MemStore {
    async fn next_due(&self, region: Region) -> Result<Option<Duration>, StoreError> {
        Ok(self.next_due_now(region))
    }

    /// Like PostgreSQL's claim, each task comes with its payload opened
    /// when this store's key can open it.
    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        let mut claimed = self.claim_now(request);
        for one in &mut claimed {
            one.payload = self.payload(&one.task).await.ok();
        }
        Ok(claimed)
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        Ok(self.end(lease, &EndAttempt::failed(reason, record)))
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        Ok(self.end(lease, &EndAttempt::abandoned(record)))
    }

    async fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        Ok(self.release_now(lease, after))
    }

    /// As PostgreSQL's: the pause and the retry are delays added to the
    /// store's own now, so a lease owner's clock never makes them early; a
    /// destination that is not there has nothing to pause, and the finish
    /// itself still applies. One finish after another: the model has
    /// nothing to batch.
    async fn finish_many(&self, batch: &[Finish]) -> Result<Finished, StoreError> {
        let mut finished = Finished::default();
        let mut tipped = Vec::new();
        for one in batch {
            if let Some(delay) = one.decision.pause_delay() {
                match self.pause_destination(&one.destination, delay).await {
                    Ok(_) | Err(StoreError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            let outcome = self.end(&one.lease, &EndAttempt::of(&one.decision));
            finished.outcomes.push(outcome);
            if outcome != TransitionOutcome::Applied {
                continue;
            }
            self.count_hour(one);
            tipped.extend(self.count_streak(one));
        }
        self.auto_disabled(tipped, &mut finished);
        Ok(finished)
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let Some(task) = state.held(lease) else {
            return Ok(state.refused(lease, None));
        };
        lifecycle::extend(task, by, now);
        Ok(TransitionOutcome::Applied)
    }
}
