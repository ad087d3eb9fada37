//! `MemStore`: a handle on the model. Clones share its state; each handle
//! holds its own key ring, clock and actor, as a process would.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use parking_lot::Mutex;

use super::state::State;
use crate::domain::{Actor, Lease, Task};
use crate::payload_crypto::PayloadKey;
use crate::policy::DisableRule;
use crate::store::contract::{Clock, TransitionOutcome};
use crate::store::rules::lifecycle::EndAttempt;

/// The in-memory model store. Clones share state.
#[derive(Debug, Clone)]
pub struct MemStore {
    pub(super) state: Arc<Mutex<State>>,
    /// This handle's key ring, as a process's: what it seals and opens
    /// with. The keys recorded as ones the data is sealed with are in
    /// `state`, shared by every handle.
    pub(super) key: PayloadKey,
    pub(super) clock: Clock,
    pub(super) disable_rule: DisableRule,
    /// Who the admin calls on this handle act as, for the audit log.
    pub(super) actor: Actor,
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

    pub(super) fn now(&self) -> DateTime<Utc> {
        self.clock.now_param().unwrap_or_else(Utc::now)
    }

    pub(super) fn end(&self, lease: &Lease, end: &EndAttempt<'_>) -> TransitionOutcome {
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
