//! `MemStore`: the schedule as a model in memory. It is the reference the
//! simulation runs thousands of schedules a second against, and the store
//! conformance suite holds it to the same behaviour as `PgStore`. Not for
//! production: nothing survives the process.
//!
//! Its clock must be pinned (there is no database clock to ask); time only
//! moves when the caller moves it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use parking_lot::Mutex;

use super::{
    rules, ClaimRequest, Clock, Replayed, Scheduled, Store, StoreError, Tokens, TransitionOutcome,
};
use crate::domain::{
    Attempt, AttemptOutcome, AttemptRecord, ClaimedTask, Destination, DestinationId, FailureReason,
    Finding, Lease, NewDestination, NewTask, Payload, ReconcileReport, ReconcileRequest, Task,
    TaskId, TaskState, TaskSummary,
};
use crate::payload_crypto::{PayloadKey, SealedPayload};

#[derive(Debug, Clone)]
struct DestinationRecord {
    destination: Destination,
    secret: Option<String>,
    rate_tokens: Option<f64>,
    rate_refilled_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Default)]
struct State {
    destinations: BTreeMap<DestinationId, DestinationRecord>,
    /// Tasks in insertion order; ids are handed out from a counter so a
    /// seeded run is reproducible.
    tasks: Vec<Task>,
    by_id: HashMap<TaskId, usize>,
    payloads: HashMap<uuid::Uuid, (String, SealedPayload)>,
    attempts: Vec<Attempt>,
    next_token: i64,
    next_id: u128,
}

/// The in-memory model store. Clones share state.
#[derive(Debug, Clone)]
pub struct MemStore {
    state: Arc<Mutex<State>>,
    key: PayloadKey,
    clock: Clock,
}

impl MemStore {
    /// A model whose time is `clock`, which must be pinned.
    pub fn new(key: PayloadKey, clock: Clock) -> Self {
        Self {
            state: Arc::default(),
            key,
            clock,
        }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now_param().unwrap_or_else(Utc::now)
    }

    fn end(
        &self,
        lease: &Lease,
        target: (TaskState, AttemptOutcome),
        available_at: Option<DateTime<Utc>>,
        reason: Option<String>,
        record: &AttemptRecord,
    ) -> TransitionOutcome {
        let now = self.now();
        self.state
            .lock()
            .end_attempt(lease, target, available_at, reason, record, now)
    }

    /// Every task, for invariant checks.
    pub fn all_tasks(&self) -> Vec<Task> {
        self.state.lock().tasks.clone()
    }
}

fn attempt(
    lease: &Lease,
    outcome: AttemptOutcome,
    record: &AttemptRecord,
    next: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    number: i32,
) -> Attempt {
    Attempt {
        task_id: lease.task_id,
        attempt_number: number,
        lease_token: lease.token,
        consumer_id: lease.owner.clone(),
        outcome,
        observed: record.clone(),
        next_available_at: next,
        recorded_at: now,
    }
}

impl State {
    fn task_mut(&mut self, id: TaskId) -> Option<&mut Task> {
        let i = *self.by_id.get(&id)?;
        self.tasks.get_mut(i)
    }

    /// The guard of every transition out of `leased`.
    fn held(&mut self, lease: &Lease) -> Option<&mut Task> {
        self.task_mut(lease.task_id)
            .filter(|t| t.state == TaskState::Leased && t.lease_token == Some(lease.token))
    }

    fn refused(&self, lease: &Lease, outcome: Option<AttemptOutcome>) -> TransitionOutcome {
        if !self.by_id.contains_key(&lease.task_id) {
            return TransitionOutcome::NotFound;
        }
        let repeated = outcome.is_some_and(|o| {
            self.attempts.iter().any(|a| {
                a.task_id == lease.task_id && a.lease_token == lease.token && a.outcome == o
            })
        });
        if repeated {
            TransitionOutcome::Applied
        } else {
            TransitionOutcome::Fenced
        }
    }

    fn end_attempt(
        &mut self,
        lease: &Lease,
        (target, outcome): (TaskState, AttemptOutcome),
        available_at: Option<DateTime<Utc>>,
        reason: Option<String>,
        record: &AttemptRecord,
        now: DateTime<Utc>,
    ) -> TransitionOutcome {
        let Some(task) = self.held(lease) else {
            // As in PostgreSQL: an abandon is never a repeat, because the
            // reclaim that fenced it logged an `abandoned` row for the token.
            let repeat = (outcome != AttemptOutcome::Abandoned).then_some(outcome);
            let refusal = self.refused(lease, repeat);
            if refusal == TransitionOutcome::Fenced {
                let fenced = attempt(
                    lease,
                    AttemptOutcome::Fenced,
                    record,
                    None,
                    now,
                    lease.attempt.max(1),
                );
                self.attempts.push(fenced);
            }
            return refusal;
        };
        task.state = target;
        task.lease_token = None;
        task.lease_owner = None;
        task.lease_expires_at = None;
        task.available_at = available_at
            .unwrap_or(task.available_at)
            .max(task.not_before);
        task.failure_reason = reason;
        task.last_status = record.http_status;
        task.delivered_at = (target == TaskState::Delivered).then_some(now);
        task.finalized_at = target.is_terminal().then_some(now);
        task.updated_at = now;
        let number = task.attempt_count;
        self.attempts
            .push(attempt(lease, outcome, record, available_at, now, number));
        TransitionOutcome::Applied
    }

    fn due(task: &Task, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match task.state {
            TaskState::Pending | TaskState::RetryWait
                if task.available_at <= now && task.not_before <= now =>
            {
                Some(task.available_at)
            }
            TaskState::Leased => task.lease_expires_at.filter(|at| *at <= now),
            _ => None,
        }
    }
}

impl Store for MemStore {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        let mut state = self.state.lock();
        if let Some(existing) = state.destinations.get(&new.id) {
            return rules::same_destination_or_conflict(
                existing.destination.clone(),
                &existing.secret,
                &new,
            );
        }
        let destination = Destination {
            id: new.id.clone(),
            region: new.region,
            url: new.url.clone(),
            has_signing_secret: new.signing_secret.is_some(),
            enabled: true,
            paused_until: None,
        };
        state.destinations.insert(
            new.id,
            DestinationRecord {
                destination: destination.clone(),
                secret: new.signing_secret,
                rate_tokens: None,
                rate_refilled_at: None,
            },
        );
        Ok(destination)
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        Ok(self
            .state
            .lock()
            .destinations
            .get(id)
            .map(|d| d.destination.clone()))
    }

    async fn signing_secret(&self, id: &DestinationId) -> Result<Option<String>, StoreError> {
        let state = self.state.lock();
        let record = state
            .destinations
            .get(id)
            .ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
        Ok(record.secret.clone())
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        until: DateTime<Utc>,
    ) -> Result<DateTime<Utc>, StoreError> {
        let mut state = self.state.lock();
        let record = state
            .destinations
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
        let paused = record
            .destination
            .paused_until
            .map_or(until, |p| p.max(until));
        record.destination.paused_until = Some(paused);
        Ok(paused)
    }

    async fn take_tokens(
        &self,
        id: &DestinationId,
        rate_per_second: f64,
        burst: u32,
        want: u32,
    ) -> Result<Tokens, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let record = state
            .destinations
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
        let rate = rate_per_second.max(1e-3);
        let burst = f64::from(burst.max(1));
        let elapsed = (now - record.rate_refilled_at.unwrap_or(now))
            .num_microseconds()
            .unwrap_or(0) as f64
            / 1e6;
        let tokens = (record.rate_tokens.unwrap_or(burst) + elapsed * rate).min(burst);
        let granted = tokens.floor().min(f64::from(want.max(1))).max(0.0);
        record.rate_tokens = Some(tokens - granted);
        record.rate_refilled_at = Some(now);
        if granted >= 1.0 {
            return Ok(Tokens::Granted(granted as u32));
        }
        Ok(Tokens::WaitFor(std::time::Duration::from_secs_f64(
            (1.0 - tokens).max(0.0) / rate,
        )))
    }

    async fn schedule(&self, new: NewTask) -> Result<Scheduled, StoreError> {
        let new = rules::validate(new)?;
        let now = self.now();
        let mut state = self.state.lock();
        let region = state
            .destinations
            .get(&new.destination_id)
            .map(|d| d.destination.region);
        rules::check_destination(region, &new)?;
        let existing = state
            .tasks
            .iter()
            .find(|t| t.tenant_id == new.tenant_id && t.reminder_id == new.reminder_id)
            .cloned();
        if let Some(existing) = existing {
            let (content_type, sealed) = state
                .payloads
                .get(&existing.payload_ref)
                .cloned()
                .ok_or_else(|| StoreError::NotFound {
                    what: "payload",
                    id: existing.payload_ref.to_string(),
                })?;
            let body = self
                .key
                .open(existing.payload_ref, &content_type, &sealed)?;
            return rules::same_or_conflict(existing, &Payload { content_type, body }, &new);
        }
        state.next_id += 1;
        let id = TaskId(uuid::Uuid::from_u128(state.next_id));
        let payload_ref = uuid::Uuid::from_u128(state.next_id | (1 << 127));
        let sealed = self
            .key
            .seal(payload_ref, &new.payload.content_type, &new.payload.body);
        state
            .payloads
            .insert(payload_ref, (new.payload.content_type.clone(), sealed));
        let task = Task {
            id,
            tenant_id: new.tenant_id,
            reminder_id: new.reminder_id,
            destination_id: new.destination_id,
            region: new.region,
            state: TaskState::Pending,
            not_before: new.not_before,
            available_at: new.not_before,
            retry_horizon_at: new.not_before + new.retry_horizon,
            lease_token: None,
            lease_owner: None,
            lease_expires_at: None,
            attempt_count: 0,
            idempotency_key: rules::idempotency_key(id),
            payload_ref,
            last_status: None,
            failure_reason: None,
            created_at: now,
            updated_at: now,
            delivered_at: None,
            finalized_at: None,
        };
        let index = state.tasks.len();
        state.by_id.insert(id, index);
        state.tasks.push(task.clone());
        Ok(Scheduled {
            task,
            created: true,
        })
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
        let Some(task) = state.task_mut(id) else {
            return Ok(Replayed::NotFound);
        };
        if task.state != TaskState::Failed {
            return Ok(Replayed::NotFailed(task.clone()));
        }
        let from = now.max(task.not_before);
        task.state = TaskState::Pending;
        task.available_at = from;
        task.retry_horizon_at = from + horizon;
        task.attempt_count = 0;
        task.failure_reason = None;
        task.finalized_at = None;
        task.updated_at = now;
        Ok(Replayed::Replayed(task.clone()))
    }

    async fn reconcile(&self, request: &ReconcileRequest) -> Result<ReconcileReport, StoreError> {
        let now = self.now();
        let in_region = |t: &Task| request.region.is_none_or(|r| t.region == r);
        let summarize = |tasks: Vec<&Task>| Finding {
            count: tasks.len() as i64,
            tasks: tasks
                .into_iter()
                .take(usize::try_from(request.list_limit).unwrap_or(0))
                .map(|t| TaskSummary {
                    id: t.id,
                    tenant_id: t.tenant_id.clone(),
                    reminder_id: t.reminder_id.clone(),
                    destination_id: t.destination_id.clone(),
                    region: t.region,
                    state: t.state,
                    not_before: t.not_before,
                    available_at: t.available_at,
                    lease_owner: t.lease_owner.clone(),
                    lease_expires_at: t.lease_expires_at,
                    attempt_count: t.attempt_count,
                })
                .collect(),
        };
        let mut state = self.state.lock();
        let mut report = ReconcileReport::default();
        let mut expired: Vec<&Task> = state
            .tasks
            .iter()
            .filter(|t| {
                in_region(t)
                    && t.state == TaskState::Leased
                    && t.lease_expires_at.is_some_and(|at| at <= now)
            })
            .collect();
        expired.sort_by_key(|t| t.lease_expires_at);
        report.expired_leases = summarize(expired);
        let mut old: Vec<&Task> = state
            .tasks
            .iter()
            .filter(|t| {
                in_region(t)
                    && matches!(t.state, TaskState::Pending | TaskState::RetryWait)
                    && t.available_at.max(t.not_before) <= now - request.older_than
            })
            .collect();
        old.sort_by_key(|t| t.available_at.max(t.not_before));
        report.old_eligible = summarize(old);
        let mut past: Vec<&Task> = state
            .tasks
            .iter()
            .filter(|t| in_region(t) && !t.state.is_terminal() && t.retry_horizon_at < now)
            .collect();
        past.sort_by_key(|t| t.retry_horizon_at);
        report.past_horizon = summarize(past);
        let mut terminal: BTreeMap<String, i64> = BTreeMap::new();
        for t in state
            .tasks
            .iter()
            .filter(|t| in_region(t) && t.state.is_terminal())
        {
            *terminal
                .entry(
                    t.failure_reason
                        .clone()
                        .unwrap_or_else(|| "delivered".into()),
                )
                .or_default() += 1;
        }
        report.terminal = terminal.into_iter().collect();
        if let Some(ledger) = request.ledger.as_ref().filter(|l| !l.is_empty()) {
            let known = |tenant: &crate::domain::TenantId, reminder: &crate::domain::ReminderId| {
                ledger
                    .iter()
                    .any(|e| &e.tenant_id == tenant && &e.reminder_id == reminder)
            };
            let mut missing: Vec<_> = ledger
                .iter()
                .filter(|e| {
                    !state
                        .tasks
                        .iter()
                        .any(|t| t.tenant_id == e.tenant_id && t.reminder_id == e.reminder_id)
                })
                .cloned()
                .collect();
            missing.sort_by_key(|e| e.due);
            report.missing_from_schedule = missing;
            let (first, last) = ledger.iter().fold(
                (DateTime::<Utc>::MAX_UTC, DateTime::<Utc>::MIN_UTC),
                |(lo, hi), e| (lo.min(e.due), hi.max(e.due)),
            );
            let mut unknown: Vec<&Task> = state
                .tasks
                .iter()
                .filter(|t| {
                    in_region(t)
                        && t.not_before >= first
                        && t.not_before <= last
                        && !known(&t.tenant_id, &t.reminder_id)
                })
                .collect();
            unknown.sort_by_key(|t| t.not_before);
            report.unknown_to_ledger = summarize(unknown);
        }
        if request.reclaim {
            let expired: Vec<(TaskId, Lease)> = state
                .tasks
                .iter()
                .filter(|t| {
                    in_region(t)
                        && t.state == TaskState::Leased
                        && t.lease_expires_at.is_some_and(|at| at <= now)
                })
                .map(|t| {
                    (
                        t.id,
                        Lease {
                            task_id: t.id,
                            token: t.lease_token.unwrap_or_default(),
                            owner: t.lease_owner.clone().unwrap_or_default(),
                            attempt: t.attempt_count,
                        },
                    )
                })
                .collect();
            for (id, lease) in &expired {
                state.attempts.push(attempt(
                    lease,
                    AttemptOutcome::Abandoned,
                    &AttemptRecord::default(),
                    None,
                    now,
                    lease.attempt,
                ));
                if let Some(task) = state.task_mut(*id) {
                    task.state = TaskState::RetryWait;
                    task.lease_token = None;
                    task.lease_owner = None;
                    task.lease_expires_at = None;
                    task.available_at = now.max(task.not_before);
                    task.updated_at = now;
                }
            }
            report.reclaimed = expired.len() as i64;
        }
        Ok(report)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn payload(&self, task: &Task) -> Result<Payload, StoreError> {
        let (content_type, sealed) = self
            .state
            .lock()
            .payloads
            .get(&task.payload_ref)
            .cloned()
            .ok_or_else(|| StoreError::NotFound {
                what: "payload",
                id: task.payload_ref.to_string(),
            })?;
        let body = self.key.open(task.payload_ref, &content_type, &sealed)?;
        Ok(Payload { content_type, body })
    }

    async fn claim_due(&self, request: &ClaimRequest) -> Result<Vec<ClaimedTask>, StoreError> {
        if request.limit == 0 || request.per_destination_cap == 0 {
            return Ok(Vec::new());
        }
        let now = self.now();
        let limit = request.limit as usize;
        let cap = request.per_destination_cap as usize;
        let mut state = self.state.lock();
        let open: Vec<DestinationId> = state
            .destinations
            .values()
            .filter(|d| {
                let d = &d.destination;
                d.region == request.region && d.enabled && d.paused_until.is_none_or(|p| p <= now)
            })
            .map(|d| d.destination.id.clone())
            .collect();
        // Per destination: up to `cap` due rows and `cap` expired leases,
        // then round-robin by turn, as the SQL claim does.
        let mut chosen: Vec<(usize, DateTime<Utc>, usize)> = Vec::new();
        let mut destinations_with_work = 0;
        for destination in &open {
            if destinations_with_work == limit {
                break;
            }
            let mut due: Vec<(DateTime<Utc>, usize)> = Vec::new();
            let mut expired: Vec<(DateTime<Utc>, usize)> = Vec::new();
            for (i, t) in state.tasks.iter().enumerate() {
                if &t.destination_id != destination || t.region != request.region {
                    continue;
                }
                if let Some(at) = State::due(t, now) {
                    if t.state == TaskState::Leased {
                        expired.push((at, i));
                    } else {
                        due.push((at, i));
                    }
                }
            }
            if due.is_empty() && expired.is_empty() {
                continue;
            }
            destinations_with_work += 1;
            due.sort();
            expired.sort();
            let mut candidates: Vec<_> = due
                .into_iter()
                .take(cap)
                .chain(expired.into_iter().take(cap))
                .collect();
            candidates.sort();
            for (turn, (at, i)) in candidates.into_iter().take(cap).enumerate() {
                chosen.push((turn, at, i));
            }
        }
        chosen.sort();
        chosen.truncate(limit);

        let mut claimed = Vec::with_capacity(chosen.len());
        for (_, _, i) in chosen {
            state.next_token += 1;
            let token = state.next_token;
            let prior = state.tasks[i].clone();
            let reclaimed = prior.state == TaskState::Leased;
            if reclaimed {
                let lease = Lease {
                    task_id: prior.id,
                    token: prior.lease_token.unwrap_or_default(),
                    owner: prior.lease_owner.clone().unwrap_or_default(),
                    attempt: prior.attempt_count,
                };
                state.attempts.push(attempt(
                    &lease,
                    AttemptOutcome::Abandoned,
                    &AttemptRecord::default(),
                    None,
                    now,
                    prior.attempt_count,
                ));
            }
            let expires = now + request.lease.max(Duration::milliseconds(1));
            let task = &mut state.tasks[i];
            task.state = TaskState::Leased;
            task.lease_token = Some(token);
            task.lease_owner = Some(request.consumer.clone());
            task.lease_expires_at = Some(expires);
            task.attempt_count += 1;
            task.updated_at = now;
            claimed.push(ClaimedTask {
                task: task.clone(),
                lease_token: token,
                lease_expires_at: expires,
                reclaimed,
            });
        }
        Ok(claimed)
    }

    async fn mark_delivered(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        Ok(self.end(
            lease,
            (TaskState::Delivered, AttemptOutcome::Delivered),
            None,
            None,
            record,
        ))
    }

    async fn move_to_retry_wait(
        &self,
        lease: &Lease,
        available_at: DateTime<Utc>,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        Ok(self.end(
            lease,
            (TaskState::RetryWait, AttemptOutcome::RetryWait),
            Some(available_at),
            None,
            record,
        ))
    }

    async fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        Ok(self.end(
            lease,
            (TaskState::Failed, AttemptOutcome::Failed),
            None,
            Some(reason.code()),
            record,
        ))
    }

    async fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> Result<TransitionOutcome, StoreError> {
        Ok(self.end(
            lease,
            (TaskState::RetryWait, AttemptOutcome::Abandoned),
            None,
            None,
            record,
        ))
    }

    async fn release(
        &self,
        lease: &Lease,
        not_before_retry: Option<DateTime<Utc>>,
    ) -> Result<TransitionOutcome, StoreError> {
        let now = self.now();
        let mut state = self.state.lock();
        let Some(task) = state.held(lease) else {
            return Ok(state.refused(lease, None));
        };
        task.state = if task.attempt_count > 1 {
            TaskState::RetryWait
        } else {
            TaskState::Pending
        };
        task.attempt_count -= 1;
        task.lease_token = None;
        task.lease_owner = None;
        task.lease_expires_at = None;
        task.available_at =
            not_before_retry.map_or(task.available_at, |at| task.available_at.max(at));
        task.updated_at = now;
        Ok(TransitionOutcome::Applied)
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
        task.lease_expires_at = task.lease_expires_at.map(|at| at.max(now + by));
        task.updated_at = now;
        Ok(TransitionOutcome::Applied)
    }
}
