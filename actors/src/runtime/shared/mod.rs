//! What every actor of a region's runtime shares.
//!
//! # Layout
//! - `messages`: the messages the actors exchange.
//! - `capacity`: the slots claimed tasks hold in memory.
//! - `batcher`: many small store calls made as one.
//! - `guard`: a panic turned into a supervised restart; `restarts`:
//!   which actors keep failing.
//! - `failpoint`: named failpoints at a delivery's boundaries.
//! - `metrics/`: what the runtime exports on /metrics, its families and
//!   their label sets;
//!   `runtime_stats`: what the actors count; `delivery_summary` each
//!   destination's deliveries since its last `deliveries` log line.
//! - `wall_clock`: this host's clock, as the runtime reads it.
//! - The state every stage reaches through [`Shared`]: `holds`, the
//!   destinations the claimer leaves out for a while (pauses from a 429,
//!   holds a throttle sets from what it has queued); `changed_tasks`,
//!   tasks an operator changed while this process may hold them claimed
//!   and unsent; `targets`, the destinations this process has read, kept
//!   for the sends that follow (`reads`: the batched reads of those it
//!   has not); `paces`, the limits each destination's last throttle took;
//!   `buckets`, token takes for every throttle, a batch per statement;
//!   `quotas`, what receivers announce of their quotas, written in
//!   batches.

pub(super) mod batcher;
pub mod buckets;
pub(super) mod capacity;
pub(super) mod changed_tasks;
pub(super) mod delivery_summary;
pub mod failpoint;
pub(super) mod guard;
pub(super) mod holds;
pub(super) mod messages;
pub(super) mod metrics;
pub(super) mod paces;
pub mod quotas;
pub(super) mod reads;
pub(super) mod restarts;
pub(super) mod runtime_stats;
pub(super) mod targets;
pub(super) mod wall_clock;

use std::borrow::Cow;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use remit::domain::{DestinationId, Region, SendTarget};
use remit::policy::RetryPolicy;
use remit::store::{Database, Finish, ReportReader, TransitionOutcome};
use tokio::sync::Semaphore;

use crate::config::{Config, ThrottleLimits};
use crate::egress::Egress;
use crate::telemetry::Telemetry;
use buckets::Buckets;
use capacity::Capacity;
use changed_tasks::ChangedTasks;
use holds::Holds;
use paces::Paces;
use quotas::Quotas;
use restarts::Restarts;
use runtime_stats::RuntimeStats;
use targets::Targets;
use wall_clock::WallClock;

/// Cheap to clone; every actor of the region holds one.
#[derive(Clone)]
pub struct Shared {
    pub store: Database,
    /// Where the reports read: the replica `database.read_url` names, or
    /// the primary.
    pub reports: ReportReader,
    pub region: Region,
    pub lease_owner: Rc<str>,
    pub config: Rc<Config>,
    pub policy: Rc<RetryPolicy>,
    /// Where webhooks may be sent (`send.allow_hosts` and friends).
    pub egress: Arc<Egress>,
    pub log: slog::Logger,
    pub capacity: Capacity,
    /// Destination pauses this process knows of.
    pub pauses: Holds,
    /// Destinations this process cannot start anything for soon.
    pub busy: Holds,
    /// The limits of destinations with settings of their own, as their
    /// throttles last took them.
    pub paces: Paces,
    /// Destinations as read for earlier sends.
    pub targets: Targets,
    /// Tasks an operator changed that this process may hold unsent.
    pub changed: ChangedTasks,
    /// Commits the outcomes of deliveries in batches: the Finisher
    /// (`finish/finisher`), named by what it takes and answers so that
    /// what every stage shares does not depend on a stage.
    pub finisher: batcher::Batcher<Finish, TransitionOutcome>,
    /// Takes tokens for every throttle, in batches.
    pub buckets: Buckets,
    /// Writes the quotas receivers announce, in batches.
    pub quotas: Quotas,
    /// Requests under way in this process, outcome committed or not
    /// (`send.max_in_flight`); the capacity holds more tasks than this, so
    /// the next ones are claimed while these are sent.
    pub requests: Arc<Semaphore>,
    pub restarts: Restarts,
    pub wall: WallClock,
    /// The tracer of claim and attempt spans, when tracing is on.
    pub telemetry: Telemetry,
    pub stats: Arc<RuntimeStats>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("region", &self.region)
            .field("lease_owner", &self.lease_owner)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.config.lease.seconds)
    }

    /// The longest a claimed task may wait in memory for its throttle: a
    /// small fraction of the lease, so it goes back to the database long
    /// before anyone could reclaim it.
    pub fn max_stay(&self) -> Duration {
        self.lease() / 5
    }

    /// Whether `limits` of `destination` are worth keeping in `paces`: its
    /// own (a new throttle would not start from them otherwise), or slow
    /// enough to cap a claim, whatever set them.
    pub fn paces_keep(&self, destination: &DestinationId, limits: &ThrottleLimits) -> bool {
        let cap = self.config.claim.per_destination_cap;
        *limits != self.config.throttle_for(destination)
            || paces::claim_cap(limits, self.max_stay(), cap) < cap
    }

    pub fn send_timeout(&self) -> Duration {
        Duration::from_millis(self.config.send.timeout_ms)
    }

    /// The send timeout of a request to `target`: its own when it has one,
    /// never more than half the lease (as `send.timeout_ms` is checked to
    /// be), so the finish still fits in the lease.
    pub fn send_timeout_for(&self, target: &SendTarget) -> Duration {
        match target.destination.settings.timeout_ms {
            Some(ms) => Duration::from_millis(u64::from(ms)).min(self.lease() / 2),
            None => self.send_timeout(),
        }
    }

    /// The retry policy of a task of `target`: the runtime's, with the
    /// destination's own attempt budget when it has one.
    pub fn policy_for(&self, target: &SendTarget) -> Cow<'_, RetryPolicy> {
        match target.destination.settings.max_attempts {
            Some(max_attempts) if max_attempts != self.policy.max_attempts => {
                Cow::Owned(RetryPolicy {
                    max_attempts,
                    ..(*self.policy).clone()
                })
            }
            _ => Cow::Borrowed(&self.policy),
        }
    }

    /// What a request must leave of its lease for the finish to commit:
    /// a request starts only with `send_timeout + finish_margin` left, and
    /// the lease is extended when the finish gets this close to its end.
    pub fn finish_margin(&self) -> Duration {
        self.lease() / 4
    }
}
