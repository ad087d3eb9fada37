//! The per-region actor runtime, its folders in the order a task passes
//! through them.
//!
//! ```text
//! RegionSupervisor ─┬─ claim/     Claimer: leases due work (LISTEN/NOTIFY + polling)
//!                   ├─ throttle/  Throttle × dest: token bucket, in-flight cap, 429
//!                   │             pause; one per destination with work here
//!                   ├─ send/      Sender × N: awc POST → policy → Finisher
//!                   ├─ finish/    Finisher: fenced finishes, a batch per commit
//!                   └─ upkeep/    Reconciler, Pruner, Alerter, EventRelay: on timers
//! ```
//! Work flows Claimer → Supervisor (route) → Throttle (admit) → Sender
//! (deliver) → Finisher (commit) → Throttle (wake). Token takes
//! (`shared/buckets`), quotas (`shared/quotas`) and destination reads
//! (`shared/reads`) are batched, one statement for many callers. All state
//! is in the database (PostgreSQL or a SQLite file); memory holds at most
//! twice `send.max_in_flight` claimed tasks, each owning a capacity slot,
//! of which at most `send.max_in_flight` have a request under way. A panic
//! anywhere becomes a stop and a supervised restart (`shared/guard`).
//!
//! # Layout
//! - `supervisor`: the region's Supervisor, which starts and restarts
//!   every actor below and routes claimed tasks to their throttles.
//! - `claim/`: the Claimer and the listener.
//! - `throttle/`: a Throttle per destination: its tokens, its cap, its
//!   pause, and how long claimed work may stay.
//! - `send/`: the Senders and one delivery's way to its decision.
//! - `finish/`: the Finisher, commits, hand-backs, retries.
//! - `upkeep/`: the Reconciler, Pruner, Alerter and EventRelay, and the
//!   bulk jobs.
//! - `shared/`: what every actor shares: messages, capacity, batching,
//!   restarts, failpoints, metrics, the wall clock, and the state every
//!   stage reaches through `Shared` (holds, changed tasks, send targets,
//!   paces, the token and quota batchers).

mod claim;
mod finish;
mod send;
mod shared;
mod supervisor;
mod throttle;
mod upkeep;

pub use shared::failpoint;

pub use finish::finisher;

pub use shared::quotas;

pub use shared::buckets;

pub use upkeep::jobs;

pub use crate::events_destination::{
    events_destination_id, EVENTS_DESTINATION_PREFIX, EVENTS_TENANT,
};
pub use claim::claimer::Claimer;
pub use finish::finisher::Finisher;
pub use send::pool::SenderPool;
pub use send::sender::Sender;
pub use send::transport::USER_AGENT;
pub use shared::batcher::BatchError;
pub use shared::buckets::Buckets;
pub use shared::capacity::{Capacity, Slot};
pub use shared::changed_tasks::ChangedTasks;
pub use shared::holds::Holds;
pub use shared::messages::Shutdown;
pub use shared::metrics::{exposition, Metrics};
pub use shared::paces::Paces;
pub use shared::quotas::Quotas;
pub use shared::restarts::Restarts;
pub use shared::runtime_stats::RuntimeStats;
pub use shared::targets::Targets;
pub use shared::wall_clock::WallClock;
pub use shared::Shared;
pub use supervisor::{CrashSender, RegionSupervisor};
pub use throttle::Throttle;
pub use upkeep::alerter::Alerter;
pub use upkeep::event_relay::EventRelay;
pub use upkeep::pruner::Pruner;
pub use upkeep::reconciler::Reconciler;
