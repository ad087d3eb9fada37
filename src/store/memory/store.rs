//! The runtime's calls (`Store`) on the model.

use chrono::{DateTime, Duration, Utc};

use super::super::rules::audit_entries::task_changed;
use super::super::rules::lifecycle::{self, EndAttempt};
use super::super::{
    ClaimRequest, Finish, Finished, QuotaNote, Replayed, Scheduled, Store, StoreError,
    TokenRequest, Tokens, TransitionOutcome,
};
use crate::domain::{
    ApiToken, Attempt, AttemptRecord, AuditAction, ClaimedTask, Destination, DestinationEvent,
    DestinationId, FailureReason, Lease, NewApiToken, NewDestination, NewTask, Payload,
    PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region, Rotation, SendTarget,
    SigningSecret, Task, TaskId, TokenHash, TokenId,
};

use super::MemStore;

impl Store for MemStore {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        self.register(new)
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        self.rotate_now(id, rotation)
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        let state = self.state.lock();
        let record = state
            .live_destination(id)
            .ok_or_else(|| StoreError::no_destination(id))?;
        Ok(record.listed_secrets())
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        Ok(self
            .state
            .lock()
            .live_destination(id)
            .map(|d| d.destination.clone()))
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        let now = self.now();
        let state = self.state.lock();
        let target = |id| {
            state
                .live_destination(id)
                .map(|record| {
                    let mut destination = record.destination.clone();
                    destination.settings.headers = record
                        .headers
                        .iter()
                        .map(|h| h.opened(&self.key, id.as_str()))
                        .collect::<Result<_, _>>()?;
                    Ok(SendTarget {
                        destination,
                        signing_secrets: record.valid_secrets(&self.key, now)?,
                        pause_left: record
                            .destination
                            .paused_until
                            .map(|until| until - now)
                            .filter(|left| *left > Duration::zero()),
                    })
                })
                .transpose()
        };
        ids.iter().map(target).collect()
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let record = state
            .live_destination_mut(id)
            .ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
        let paused = lifecycle::pause(record.destination.paused_until, pause, now);
        record.destination.paused_until = Some(paused);
        Ok(paused)
    }

    async fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> Result<Vec<Option<Tokens>>, StoreError> {
        asks.iter()
            .map(|ask| {
                match self.take_now(&ask.destination, ask.rate_per_second, ask.burst, ask.want) {
                    Ok(tokens) => Ok(Some(tokens)),
                    Err(StoreError::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .collect()
    }

    async fn learn_quotas(&self, notes: &[QuotaNote]) -> Result<(), StoreError> {
        self.learn_now(notes);
        Ok(())
    }

    /// One `schedule` per task, in order: the model has nothing to batch.
    async fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> Result<Vec<Result<Scheduled, StoreError>>, StoreError> {
        let mut answers = Vec::with_capacity(batch.len());
        for new in batch {
            answers.push(match self.schedule_now(new) {
                // The task's own answer: bad input, a conflicting repeat, or a
                // repeat whose stored payload this key cannot open.
                Err(
                    e @ (StoreError::Invalid(_)
                    | StoreError::Conflict { .. }
                    | StoreError::Payload(_)),
                ) => Err(e),
                Err(e) => return Err(e),
                Ok(scheduled) => Ok(scheduled),
            });
        }
        Ok(answers)
    }

    async fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        let state = self.state.lock();
        Ok(state.by_id.get(&id).map(|&i| state.tasks[i].clone()))
    }

    async fn attempts(&self, id: TaskId) -> Result<Vec<Attempt>, StoreError> {
        Ok(self
            .state
            .lock()
            .attempts
            .iter()
            .filter(|a| a.task_id == id)
            .cloned()
            .collect())
    }

    async fn replay(&self, id: TaskId, horizon: Duration) -> Result<Replayed, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        state.record_failures();
        let deleted = state.destination_deleted(id);
        let Some(task) = state.task_mut(id) else {
            return Ok(Replayed::NotFound);
        };
        let before = task.clone();
        if !lifecycle::replay(task, horizon, deleted, now) {
            return Ok(Replayed::NotFailed(task.clone()));
        }
        let after = task.clone();
        state.alert_records.moved(&before, &after);
        let entry = task_changed(AuditAction::TaskReplay, &before, &after);
        self.audit_in(&mut state, entry);
        Ok(Replayed::Replayed(after))
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        Ok(self.reconcile_now(request))
    }

    async fn prune(&self, request: &PruneRequest) -> Result<PruneReport, StoreError> {
        self.prune_now(request)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        let (content_type, sealed) = self.state.lock().task_payload(task)?;
        let body = self
            .key
            .open(task.payload_ref, &content_type, &sealed)
            .map_err(|e| e.knowing_recorded(&self.key, &self.state.lock().payload_keys))?;
        Ok(Payload { content_type, body })
    }

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
            tipped.extend(self.judge(one));
        }
        self.auto_disabled(tipped, &mut finished);
        Ok(finished)
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        let now = self.now();
        if let Some(record) = self.state.lock().destinations.get_mut(id) {
            record.refused = Some((why, now));
        }
        Ok(())
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        self.disable(id, reason)
    }

    async fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<u64, StoreError> {
        self.fail_disabled(region, limit)
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        self.enable(id)
    }

    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        self.events(region, limit)
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        self.forget_events(ids)
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

    async fn add_api_token(&self, new: NewApiToken) -> Result<ApiToken, StoreError> {
        self.add_token(new)
    }

    async fn api_token_by_hash(&self, hash: &TokenHash) -> Result<Option<ApiToken>, StoreError> {
        Ok(self.token_by_hash(hash))
    }

    async fn api_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        Ok(self.tokens())
    }

    async fn revoke_api_token(&self, id: &TokenId) -> Result<Option<ApiToken>, StoreError> {
        Ok(self.revoke_token(id))
    }
}
