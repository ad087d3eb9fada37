//! `MemStore`: the schedule as a model in memory. It is the reference the
//! simulation runs thousands of schedules a second against, and the store
//! conformance suite holds it to the same behaviour as `PgStore`. Not for
//! production: nothing survives the process.
//!
//! Its clock must be pinned (there is no database clock to ask); time only
//! moves when the caller moves it.
//!
//! # Layout
//! - `state`: the model's data, one value under one lock, and the guard
//!   every transition out of `leased` goes through.
//! - Each trait of the contract in the file named like its contract
//!   file, each by the rules every store applies (`store::rules`):
//!   `schedule`, `leases`, `destinations`, `rates`, `api_tokens`,
//!   `upkeep`, `alerts`, `changes`, `reports`, `jobs`, `transfer`,
//!   `keys`.
//! - What those call, a file per group: `claim`; `lease` (hand back);
//!   `console` (the console's reads); `audit` (the audit log: entries,
//!   pages, retention); `destination_stats` (each destination's hours:
//!   counted, read, pruned);
//!   `rate` (token takes); `destinations` also registers and rotates;
//!   `destination_health` (the failure streak and the disable it may
//!   tip), `secrets`; `changes` (an operator's cancel, reschedule, erase and
//!   retry-now); `reconcile`; `retention`.
//! - `alert_records`: what the alert check keeps between checks;
//!   `failure_log`: every move into `failed`, for the reports.

mod alert_records;
mod alerts;
mod api_tokens;
mod audit;
mod changes;
mod claim;
mod console;
mod destination_health;
mod destination_stats;
mod destinations;
mod failure_log;
mod jobs;
mod keys;
mod lease;
mod leases;
mod rate;
mod rates;
mod reconcile;
mod reports;
mod retention;
mod schedule;
mod secrets;
mod state;
mod transfer;
mod upkeep;

use state::State;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use parking_lot::Mutex;

use super::rules::lifecycle::EndAttempt;
use super::rules::requests;
use crate::domain::{Actor, Lease, Task};
use crate::payload_crypto::PayloadKey;
use crate::policy::DisableRule;
use crate::store::contract::{Clock, StoreError, TransitionOutcome};

/// The in-memory model store. Clones share state.
#[derive(Debug, Clone)]
pub struct MemStore {
    state: Arc<Mutex<State>>,
    /// This handle's key ring, as a process's: what it seals and opens
    /// with. The keys recorded as ones the data is sealed with are in
    /// `state`, shared by every handle.
    key: PayloadKey,
    clock: Clock,
    disable_rule: DisableRule,
    /// Who the admin calls on this handle act as, for the audit log.
    actor: Actor,
}

impl MemStore {
    /// A model whose time is `clock`, which must be pinned.
    pub fn new(key: PayloadKey, clock: Clock) -> Self {
        Self {
            state: Arc::default(),
            key,
            clock,
            disable_rule: DisableRule::default(),
            actor: Actor::System,
        }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// A store sharing this one's data but holding another payload key, as
    /// a process configured with the wrong key would.
    pub fn with_key(&self, key: PayloadKey) -> Self {
        Self {
            state: self.state.clone(),
            key,
            clock: self.clock.clone(),
            disable_rule: self.disable_rule,
            actor: self.actor.clone(),
        }
    }

    /// The thresholds that disable a failing destination without its own.
    pub fn with_disable_rule(mut self, rule: DisableRule) -> Self {
        self.disable_rule = rule;
        self
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now_param().unwrap_or_else(Utc::now)
    }

    fn end(&self, lease: &Lease, end: &EndAttempt<'_>) -> TransitionOutcome {
        let now = self.now();
        self.state.lock().end_attempt(lease, end, now)
    }

    /// Every task, for invariant checks.
    pub fn all_tasks(&self) -> Vec<Task> {
        self.state.lock().tasks.clone()
    }

    /// Writes a task's row as given, bypassing every rule, as a hand-edited
    /// database or an import from an older remit could: for tests that hold
    /// the model to rows no transition produces. False when no task has
    /// its id.
    pub fn overwrite_task(&self, task: Task) -> bool {
        let mut state = self.state.lock();
        match state.task_mut(task.id) {
            Some(row) => {
                *row = task;
                true
            }
            None => false,
        }
    }
}
