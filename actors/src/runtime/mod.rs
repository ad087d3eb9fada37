//! The per-region actor runtime.
//!
//! ```text
//! RegionSupervisor ─┬─ Claimer            leases due work (LISTEN/NOTIFY + polling)
//!                   ├─ Throttle × dest    token bucket, in-flight cap, 429 pause;
//!                   │                     one per destination with work here
//!                   ├─ Sender × N         awc POST → policy → Finisher
//!                   ├─ Finisher           fenced finishes, a batch per commit
//!                   ├─ Buckets            token takes, a batch per statement
//!                   ├─ Quotas             receivers' announced quotas, a batch per statement
//!                   ├─ Reads              destination rows, a batch per statement
//!                   ├─ Reconciler         periodic checks, logged
//!                   ├─ Pruner             deletes old terminal tasks
//!                   ├─ Alerter            finds what a person should hear about
//!                   └─ EventRelay         turns operational events into webhooks
//! ```
//! Work flows Claimer → Supervisor (route) → Throttle (admit) → Sender
//! (deliver) → Finisher (commit) → Throttle (wake). All state is in the
//! database (PostgreSQL or a SQLite file); memory holds at most twice `send.max_in_flight` claimed
//! tasks, each owning a capacity slot, of which at most `send.max_in_flight`
//! have a request under way.
//! A panic anywhere becomes a stop and a supervised restart (`guard`).

mod alerter;
mod batcher;
pub mod buckets;
mod capacity;
mod changed_tasks;
mod claimer;
mod commit;
mod consumer;
mod delivered;
mod delivery;
mod event_relay;
pub mod failpoint;
pub mod finisher;
mod guard;
mod hand_back;
mod holds;
mod listener;
mod messages;
mod metric_labels;
mod metrics;
mod paces;
mod pool;
mod pruner;
pub mod quotas;
mod reads;
mod reconciler;
mod restarts;
mod retry;
mod runtime_stats;
mod sender;
mod shared;
mod spare;
mod supervisor;
mod targets;
mod throttle;
mod transport;
mod wall_clock;

pub use crate::events_destination::{
    events_destination_id, EVENTS_DESTINATION_PREFIX, EVENTS_TENANT,
};
pub use alerter::Alerter;
pub use batcher::BatchError;
pub use buckets::Buckets;
pub use capacity::{Capacity, Slot};
pub use changed_tasks::ChangedTasks;
pub use claimer::Claimer;
pub use event_relay::EventRelay;
pub use finisher::Finisher;
pub use holds::Holds;
pub use messages::Shutdown;
pub use metrics::Metrics;
pub use paces::Paces;
pub use pool::SenderPool;
pub use pruner::Pruner;
pub use quotas::Quotas;
pub use reconciler::Reconciler;
pub use restarts::Restarts;
pub use runtime_stats::RuntimeStats;
pub use sender::Sender;
pub use shared::Shared;
pub use supervisor::{CrashSender, RegionSupervisor};
pub use targets::Targets;
pub use throttle::Throttle;
pub use transport::USER_AGENT;
pub use wall_clock::WallClock;
