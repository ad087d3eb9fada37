//! The per-region actor runtime.
//!
//! ```text
//! RegionSupervisor ─┬─ Claimer            leases due work (LISTEN/NOTIFY + polling)
//!                   ├─ Throttle × dest    token bucket, in-flight cap, 429 pause
//!                   ├─ Sender × N         awc POST → policy → fenced finish
//!                   └─ Reconciler         periodic checks, logged
//! ```
//! Work flows Claimer → Supervisor (route) → Throttle (admit) → Sender
//! (deliver) → Throttle (sent). All state is in PostgreSQL; memory holds at
//! most `send.max_in_flight` claimed tasks.

mod capacity;
mod claimer;
pub mod failpoint;
mod messages;
mod pool;
mod reconciler;
mod sender;
mod shared;
mod supervisor;
mod throttle;
mod transport;

pub use capacity::Capacity;
pub use claimer::Claimer;
pub use messages::Shutdown;
pub use pool::SenderPool;
pub use reconciler::Reconciler;
pub use sender::Sender;
pub use shared::{RuntimeStats, Shared};
pub use supervisor::RegionSupervisor;
pub use throttle::Throttle;
pub use transport::USER_AGENT;
