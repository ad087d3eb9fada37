//! `Leases` on PostgreSQL: each call into the file that holds its
//! statements (`claim`, `next_due`, `lease`, `transitions`,
//! `finish_many`).

use super::{claim, finish_many, lease, next_due, transitions, PgStore};
use crate::domain::{AttemptRecord, ClaimedTask, FailureReason, Lease, Region};
use crate::store::{ClaimRequest, Finish, Finished, Leases, StoreError, TransitionOutcome};
use chrono::Duration;

impl Leases for PgStore {
    async fn next_due(&self, region: Region) -> Result<Option<Duration>, StoreError> {
        next_due::next_due(self, region).await
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        claim::claim_due(self, request).await
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        transitions::fail(self, lease, reason, record).await
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        transitions::abandon(self, lease, record).await
    }

    async fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        lease::hand_back(self, lease, after).await
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        lease::extend_lease(self, lease, by).await
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Finished, StoreError> {
        finish_many::finish_many(self, batch).await
    }
}
