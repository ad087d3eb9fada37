//! `Leases` on SQLite: the claim, the wait until more is due, and every
//! end of a lease, each on the connection's thread through
//! `SqliteStore::run`, writing in a `BEGIN IMMEDIATE` transaction.

use super::claim;
use super::finish;
use super::next_due;
use super::store::SqliteStore;
use crate::domain::{AttemptRecord, ClaimedTask, DestinationId, FailureReason, Lease, Region};
use crate::store::contract::{
    ClaimRequest, Finish, Finished, Leases, StoreError, StoreStats, TransitionOutcome, Wakeup,
};
use chrono::Duration;

impl Leases for SqliteStore {
    async fn next_due(&self, region: Region) -> Result<Option<Duration>, StoreError> {
        self.run(false, move |conn, ctx| {
            next_due::next_due(conn, ctx, region)
        })
        .await
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        let request = request.clone();
        let claimed = self
            .run(true, move |conn, ctx| claim::claim_due(conn, ctx, &request))
            .await?;
        let reclaimed = claimed.iter().filter(|c| c.reclaimed).count();
        StoreStats::add(&self.shared.stats.claimed, claimed.len() as u64);
        StoreStats::add(&self.shared.stats.reclaimed, reclaimed as u64);
        Ok(claimed)
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.end(lease, finish::End::Failed(reason.clone()), record)
            .await
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        self.end(lease, finish::End::Abandoned, record).await
    }

    async fn hand_back(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> Result<TransitionOutcome, StoreError> {
        let lease = lease.clone();
        let outcome = self
            .run(true, move |conn, ctx| {
                finish::hand_back(conn, &lease, after, ctx.now)
            })
            .await?;
        self.count_fenced(outcome);
        Ok(outcome)
    }

    async fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> Result<TransitionOutcome, StoreError> {
        let lease = lease.clone();
        self.run(true, move |conn, ctx| {
            finish::extend(conn, &lease, by, ctx.now)
        })
        .await
    }

    async fn finish_many(&self, batch: &[Finish]) -> Result<Finished, StoreError> {
        let batch = batch.to_vec();
        let rule = self.disable_rule;
        let paused: Vec<DestinationId> = batch
            .iter()
            .filter(|f| f.decision.pause_delay().is_some())
            .map(|f| f.destination.clone())
            .collect();
        let finished = self
            .run(true, move |conn, ctx| {
                finish::finish_many(conn, &batch, ctx.now, rule)
            })
            .await?;
        let fenced = finished
            .outcomes
            .iter()
            .filter(|o| **o == TransitionOutcome::Fenced)
            .count();
        StoreStats::add(&self.shared.stats.fenced, fenced as u64);
        for id in paused {
            self.wake(Wakeup::Destination(id));
        }
        for d in &finished.disabled {
            self.wake(Wakeup::Destination(d.destination.id.clone()));
        }
        Ok(finished)
    }
}

impl SqliteStore {
    async fn end(
        &self,
        lease: &Lease,
        end: finish::End,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        let lease = lease.clone();
        let record = record.clone();
        let outcome = self
            .run(true, move |conn, ctx| {
                finish::end_attempt(conn, &lease, &end.with(&record), ctx.now)
            })
            .await?;
        self.count_fenced(outcome);
        Ok(outcome)
    }

    fn count_fenced(&self, outcome: TransitionOutcome) {
        if outcome == TransitionOutcome::Fenced {
            StoreStats::add(&self.shared.stats.fenced, 1);
        }
    }
}
