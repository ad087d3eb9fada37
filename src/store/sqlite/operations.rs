//! The `Store` operations on SQLite: each runs on the connection's thread
//! through `SqliteStore::run`, writes in a `BEGIN IMMEDIATE` transaction,
//! and wakes this process's listeners after it commits.

use chrono::{DateTime, Duration, Utc};
use diesel::RunQueryDsl;

use super::{
    api_tokens, audit, claim, destinations, finish, maintenance, next_due, rate, rows, schedule,
    secrets, SqliteStore,
};
use crate::domain::{
    ApiToken, Attempt, AttemptRecord, AuditAction, ClaimedTask, Destination, DestinationEvent,
    DestinationId, FailureReason, Lease, NewApiToken, NewDestination, NewTask, Payload,
    PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region, Rotation, SendTarget,
    SigningSecret, Task, TaskId, TokenHash, TokenId,
};
use crate::store::rules::audit_entries::task_changed;
use crate::store::Wakeup;
use crate::store::{
    ClaimRequest, Finish, Finished, QuotaNote, Replayed, Scheduled, Store, StoreError, StoreStats,
    TokenRequest, Tokens, TransitionOutcome,
};

impl Store for SqliteStore {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        self.run(true, move |conn, ctx| destinations::add(conn, ctx, new))
            .await
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, _| destinations::shown(conn, &id))
            .await
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        let ids = ids.to_vec();
        self.run(false, move |conn, ctx| {
            ids.iter()
                .map(|id| destinations::send_target(conn, &ctx.key, id, ctx.now))
                .collect()
        })
        .await
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        let added = self
            .run(true, {
                let id = id.clone();
                move |conn, ctx| secrets::rotate(conn, ctx, &id, rotation)
            })
            .await?;
        // This process forgets what it keeps of the destination.
        self.wake(Wakeup::Destination(id.clone()));
        Ok(added)
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, _| secrets::list(conn, &id))
            .await
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        let id = id.clone();
        let until = self
            .run(true, {
                let id = id.clone();
                move |conn, ctx| destinations::pause(conn, &id, pause, ctx.now)
            })
            .await?;
        self.wake(Wakeup::Destination(id));
        Ok(until)
    }

    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        let asks = asks.to_vec();
        self.run(true, move |conn, ctx| {
            rate::take_tokens_many(conn, &asks, ctx.now)
        })
        .await
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        let notes = notes.to_vec();
        self.run(true, move |conn, ctx| {
            rate::learn_quotas(conn, &notes, ctx.now)
        })
        .await
    }

    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        let answers = self
            .run(true, move |conn, ctx| {
                schedule::schedule_many(conn, ctx, batch)
            })
            .await?;
        let mut woken = Vec::new();
        for scheduled in answers.iter().flatten().filter(|s| s.created) {
            if !woken.contains(&scheduled.task.region) {
                woken.push(scheduled.task.region);
                self.wake(Wakeup::DueWork(scheduled.task.region));
            }
        }
        Ok(answers)
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        self.run(false, move |conn, _| rows::task(conn, id)).await
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        self.run(false, move |conn, _| finish::attempts(conn, id))
            .await
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        self.run(true, move |conn, ctx| {
            let before = rows::task(conn, id)?;
            let replayed = finish::replay(conn, id, horizon, ctx.now)?;
            if let (Some(before), Replayed::Replayed(after)) = (&before, &replayed) {
                let entry = task_changed(AuditAction::TaskReplay, before, after);
                audit::record(conn, ctx, entry)?;
            }
            Ok(replayed)
        })
        .await
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        let request = request.clone();
        // Only a reclaim writes; a report alone must not hold the write
        // lock while it reads.
        self.run(request.reclaim, move |conn, ctx| {
            maintenance::reconcile(conn, &request, ctx.now)
        })
        .await
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        crate::store::rules::requests::check_prune(request)?;
        // The cutoff is fixed once per run, as the other stores fix it, so
        // a run ends however fast tasks keep ending.
        let now = self.run(false, |_, ctx| Ok(ctx.now)).await?;
        let cutoff = now
            .checked_sub_signed(request.older_than)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let regions = match request.region {
            Some(region) => vec![region],
            None => {
                self.run(false, |conn, _| maintenance::regions(conn))
                    .await?
            }
        };
        let mut report = PruneReport::default();
        // Region by region, one short transaction per batch, so the
        // runtime's writes get the lock between them.
        let size = request.batch_size;
        for region in regions {
            loop {
                let (tasks, attempts, payloads) = self
                    .run(true, move |conn, _| {
                        maintenance::prune_batch(conn, region, cutoff, size)
                    })
                    .await?;
                report.add_batch(tasks, attempts, payloads);
                if tasks < u64::from(size) {
                    break;
                }
            }
        }
        Ok(report)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.run(false, |conn, _| {
            diesel::sql_query("SELECT 1").execute(conn)?;
            Ok(())
        })
        .await
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        let task = task.clone();
        self.run(false, move |conn, ctx| {
            claim::task_payload(conn, &ctx.key, &task)
        })
        .await
    }

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

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        self.record_refusal(id.clone(), why).await
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        let id = id.clone();
        let disabled = self
            .run(true, move |conn, ctx| {
                audit::destination_change(conn, ctx, &id, AuditAction::DestinationDisable, |c| {
                    destinations::set_health(c, &id, ctx.now, |d, now| {
                        crate::store::rules::health::disable(d, reason, now)
                    })
                })
            })
            .await?;
        self.wake(Wakeup::Destination(disabled.id.clone()));
        Ok(disabled)
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        self.run(true, move |conn, ctx| {
            maintenance::fail_disabled_past_horizon(conn, region, limit, ctx.now)
        })
        .await
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        let id = id.clone();
        let enabled = self
            .run(true, move |conn, ctx| {
                audit::destination_change(conn, ctx, &id, AuditAction::DestinationEnable, |c| {
                    destinations::set_health(c, &id, ctx.now, crate::store::rules::health::enable)
                })
            })
            .await?;
        self.wake(Wakeup::Destination(enabled.id.clone()));
        self.wake(Wakeup::DueWork(enabled.region));
        Ok(enabled)
    }

    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        self.run(false, move |conn, _| {
            destinations::events(conn, region, limit)
        })
        .await
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        let ids = ids.to_vec();
        self.run(true, move |conn, _| destinations::forget_events(conn, &ids))
            .await
    }

    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        self.run(true, move |conn, ctx| api_tokens::add(conn, new, ctx))
            .await
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        let hash = *hash;
        self.run(false, move |conn, _| api_tokens::by_hash(conn, &hash))
            .await
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        self.run(false, |conn, _| api_tokens::list(conn)).await
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        let id = id.clone();
        self.run(true, move |conn, ctx| api_tokens::revoke(conn, &id, ctx))
            .await
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
