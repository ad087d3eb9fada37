//! What the API's handlers share (the stores, where tasks are accepted,
//! the runtime's counters), and what tells /readyz that the runtime makes progress.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use remit::domain::Region;
use remit::store::{Database, ReportReader};

use super::caller::Caller;
use super::horizons;
use crate::egress::Egress;
use crate::runtime::{Capacity, Restarts, RuntimeStats};
use crate::telemetry::Telemetry;

/// What the handlers share; safe to use from every server worker thread.
#[derive(Debug, Clone)]
pub struct ApiState {
    /// A pool of the API's own, so requests cannot take the connections
    /// delivery needs.
    pub store: Database,
    /// Where what only reads and needs no read of its own writes (a
    /// destination's stats) reads: `database.read_url`'s replica, else
    /// `store`.
    pub reports: ReportReader,
    pub rules: TaskRules,
    /// Destinations' own retry horizons, for tasks that name none.
    pub horizons: Arc<horizons::Horizons>,
    /// The bootstrap token (`api.token`): admin, checked in memory.
    pub token: Option<String>,
    /// Where webhooks may be sent; new destinations are checked against it.
    pub egress: Arc<Egress>,
    /// Whether the region's supervisor is running.
    pub running: Arc<AtomicBool>,
    /// Whether the region's runtime is making progress.
    pub progress: Progress,
    /// The runtime's counters, served by /metrics.
    pub stats: Arc<RuntimeStats>,
    /// Where 5xx answers are logged with their cause.
    pub log: slog::Logger,
    /// The tracer of each request's span, when tracing is on.
    pub telemetry: Telemetry,
}

impl ApiState {
    /// The API's store as `caller` acts: its admin calls record who made
    /// them in the audit log, in the transaction of the action.
    pub fn acting(&self, caller: &Caller) -> Database {
        self.store.acting_as(caller.actor())
    }
}

/// What tells /readyz that the runtime can make progress: no actor is
/// restart-looping, and no claimed task has sat in memory past a lease.
#[derive(Debug, Clone)]
pub struct Progress {
    pub restarts: Restarts,
    pub capacity: Capacity,
    pub lease: std::time::Duration,
}

impl Progress {
    /// Why the runtime cannot make progress, if it cannot.
    pub fn stuck(&self) -> Option<String> {
        if let Some(actor) = self.restarts.looping() {
            return Some(format!("{actor} is restart-looping"));
        }
        match self.capacity.oldest_held_for() {
            Some(held) if held > self.lease => Some(format!(
                "a claimed task has been held for {} ms, past its lease",
                held.as_millis()
            )),
            _ => None,
        }
    }
}

/// Where tasks may be accepted and the default horizon.
#[derive(Debug, Clone, Copy)]
pub struct TaskRules {
    /// The region of the accepting process.
    pub serving: Region,
    pub allow_other_regions: bool,
    pub horizon: chrono::Duration,
}
