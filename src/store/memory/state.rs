//! The model's data and the guard every transition out of `leased` goes
//! through.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use crate::domain::{
    ApiToken, Attempt, AttemptOutcome, AuditEntry, Destination, DestinationEvent,
    DestinationHealth, DestinationId, Lease, NewDestination, Task, TaskId, TokenHash,
};
use crate::payload_crypto::SealedPayload;
use crate::store::contract::{HeaderRecord, Job, SecretRecord, StoreError, TransitionOutcome};
use crate::store::rules::lifecycle::{self, EndAttempt};
use crate::store::rules::quota::LearnedRow;

/// Each destination's hours, by destination and the hour's start.
pub(super) type Hours = BTreeMap<(DestinationId, DateTime<Utc>), crate::domain::DestinationHour>;

#[derive(Debug, Clone)]
pub(super) struct DestinationRecord {
    pub(super) destination: Destination,
    /// Oldest first, each sealed as a database row holds it.
    pub(super) secrets: Vec<SecretRecord>,
    pub(super) rate_tokens: Option<f64>,
    pub(super) rate_refilled_at: Option<DateTime<Utc>>,
    /// Tokens the bucket has granted, ever.
    pub(super) rate_granted: u64,
    /// What the receiver last announced of its quota.
    pub(super) quota: Option<LearnedRow>,
    /// Why the address policy last refused it, and when.
    pub(super) refused: Option<(String, DateTime<Utc>)>,
    /// Its custom headers as the databases' rows hold them (a secret's
    /// value sealed); `destination.settings.headers` shows them.
    pub(super) headers: Vec<HeaderRecord>,
    /// When it was deleted: a tombstone no read shows.
    pub(super) deleted_at: Option<DateTime<Utc>>,
}

impl DestinationRecord {
    /// A destination as registered: enabled, not paused, with no secret
    /// yet, an untouched bucket and no failure streak.
    pub(super) fn new(new: &NewDestination) -> Self {
        Self {
            destination: Destination {
                id: new.id.clone(),
                region: new.region,
                url: new.url.clone(),
                has_signing_secret: false,
                enabled: true,
                paused_until: None,
                health: Box::new(DestinationHealth {
                    overrides: new.overrides,
                    ..DestinationHealth::default()
                }),
                settings: Box::default(),
            },
            secrets: Vec::new(),
            rate_tokens: None,
            rate_refilled_at: None,
            rate_granted: 0,
            quota: None,
            refused: None,
            headers: Vec::new(),
            deleted_at: None,
        }
    }

    /// Whether it is there for every read: not deleted.
    pub(super) fn live(&self) -> bool {
        self.deleted_at.is_none()
    }

    /// Replaces its header rows, and the headers it shows with them.
    pub(super) fn set_headers(&mut self, headers: Vec<HeaderRecord>) {
        self.destination.settings.headers = headers.iter().map(HeaderRecord::shown).collect();
        self.headers = headers;
    }
}

#[derive(Debug, Default, Clone)]
pub(super) struct State {
    pub(super) destinations: BTreeMap<DestinationId, DestinationRecord>,
    /// Tasks in insertion order; ids are handed out from a counter so a
    /// seeded run is reproducible.
    pub(super) tasks: Vec<Task>,
    pub(super) by_id: HashMap<TaskId, usize>,
    pub(super) payloads: HashMap<uuid::Uuid, (String, SealedPayload)>,
    pub(super) attempts: Vec<Attempt>,
    /// The outbox of operational events, oldest first.
    pub(super) events: Vec<DestinationEvent>,
    /// Each destination's stats by the hour, as finishes counted them.
    pub(super) hours: Hours,
    pub(super) next_token: i64,
    pub(super) next_id: u128,
    /// The audit log, oldest first, and the id of the next entry.
    pub(super) audit: Vec<AuditEntry>,
    pub(super) next_audit_id: i64,
    /// API tokens, each with the hash it is looked up by.
    pub(super) api_tokens: Vec<(TokenHash, ApiToken)>,
    pub(super) next_secret_id: u128,
    /// Bulk replays, in the order they were made.
    pub(super) jobs: Vec<Job>,
    pub(super) next_job_id: u128,
    /// The fingerprints of the keys recorded as ones its payloads and
    /// secrets are sealed with, in the order they were recorded.
    pub(super) payload_keys: Vec<Vec<u8>>,
    /// What the alert check records and keeps between checks.
    pub(super) alert_records: super::alert_records::AlertRecords,
    /// Every move of a task into `failed`, oldest first.
    pub(super) failure_log: super::failure_log::FailureLog,
}

impl State {
    /// Whether the task's destination was deleted (a missing task's or
    /// destination's was not).
    pub(super) fn destination_deleted(&self, task: TaskId) -> bool {
        self.by_id
            .get(&task)
            .and_then(|&i| self.destinations.get(&self.tasks[i].destination_id))
            .is_some_and(|d| d.deleted_at.is_some())
    }

    /// The destination, unless it is missing or deleted.
    pub(super) fn live_destination(&self, id: &DestinationId) -> Option<&DestinationRecord> {
        self.destinations.get(id).filter(|d| d.live())
    }

    pub(super) fn live_destination_mut(
        &mut self,
        id: &DestinationId,
    ) -> Option<&mut DestinationRecord> {
        self.destinations.get_mut(id).filter(|d| d.live())
    }

    /// A payload as sealed, with its content type; `NotFound` when the
    /// task points at none.
    pub(super) fn sealed_payload(
        &self,
        payload_ref: uuid::Uuid,
    ) -> Result<(String, SealedPayload), StoreError> {
        self.payloads
            .get(&payload_ref)
            .cloned()
            .ok_or_else(|| StoreError::NotFound {
                what: "payload",
                id: payload_ref.to_string(),
            })
    }

    /// A task's payload as sealed, with its content type; one an operator
    /// erased is answered as such (`StoreError::payload_erased`), whether
    /// `task` says so or the row, read now, does.
    pub(super) fn task_payload(&self, task: &Task) -> Result<(String, SealedPayload), StoreError> {
        let erased = task.payload_erased_at.or_else(|| {
            self.by_id
                .get(&task.id)
                .and_then(|&i| self.tasks[i].payload_erased_at)
        });
        match erased {
            Some(at) => Err(StoreError::payload_erased(task.payload_ref, at)),
            None => self.sealed_payload(task.payload_ref),
        }
    }

    pub(super) fn task_mut(&mut self, id: TaskId) -> Option<&mut Task> {
        let i = *self.by_id.get(&id)?;
        self.tasks.get_mut(i)
    }

    /// The guard of every transition out of `leased`.
    pub(super) fn held(&mut self, lease: &Lease) -> Option<&mut Task> {
        self.task_mut(lease.task_id)
            .filter(|t| lifecycle::lease_is_current(t, lease))
    }

    /// Why a transition found no row `lease` holds (see
    /// `lifecycle::refusal`); `outcome` is what a repeat would have logged.
    pub(super) fn refused(
        &self,
        lease: &Lease,
        outcome: Option<AttemptOutcome>,
    ) -> TransitionOutcome {
        let repeated = lifecycle::repeat_of(outcome).is_some_and(|o| {
            self.attempts.iter().any(|a| {
                a.task_id == lease.task_id && a.lease_token == lease.token && a.outcome == o
            })
        });
        lifecycle::refusal(self.by_id.contains_key(&lease.task_id), repeated)
    }

    /// Ends the attempt `lease` holds, or logs a stale lease's report as
    /// `fenced`.
    pub(super) fn end_attempt(
        &mut self,
        lease: &Lease,
        end: &EndAttempt<'_>,
        now: DateTime<Utc>,
    ) -> TransitionOutcome {
        let Some(task) = self.held(lease) else {
            let refusal = self.refused(lease, Some(end.target.1));
            if refusal == TransitionOutcome::Fenced {
                self.attempts
                    .push(lifecycle::fenced_attempt(lease, end.record, now));
            }
            return refusal;
        };
        let logged = lifecycle::end_attempt(task, lease, end, now);
        self.attempts.push(logged);
        TransitionOutcome::Applied
    }
}
