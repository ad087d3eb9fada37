//! `Leases` on PostgreSQL: each call into the file that holds its
//! statements (`claim`, `next_due`, `lease`, `transitions`,
//! `finish_many`).
//!
//! # Layout
//! - `claim` (its statement in `claim.sql`): the claim of due rows.
//! - `next_due`: when a claim could next find work.
//! - `lease`: handing a lease back, extending it.
//! - `transitions`: `fail` and `abandon`.
//! - `finish_many`: the runtime's finishes, in batches.

pub(super) mod claim;
pub(super) mod finish_many;
pub(super) mod lease;
pub(super) mod next_due;
pub(super) mod transitions;

use crate::domain::{AttemptRecord, ClaimedTask, FailureReason, Lease, Region};
use crate::store::contract::{
    ClaimRequest, Finish, Finished, Leases, StoreError, TransitionOutcome,
};
use crate::store::postgres::store::PgStore;
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
