//! What a process may ask of its database, as traits every backend
//! implements the same way ([`PgStore`](super::PgStore),
//! [`SqliteStore`](super::SqliteStore), and [`Database`](super::Database),
//! which passes each call to the one it runs on), grouped by who asks:
//!
//! - `store`: [`Store`], the runtime's calls (schedule, claim, finish,
//!   destinations, tokens), each one short transaction; the model
//!   ([`MemStore`](super::MemStore)) implements it too, and the
//!   conformance suite holds all three to one behaviour;
//! - `reports`: [`Reports`], what `remit status`, the gauges and the
//!   console read;
//! - `transfer`: [`Transfer`], `remit export` and `import`;
//! - `keys`: [`Keys`], the payload key ring: the check at start, `remit
//!   rekey`;
//! - `replay_jobs`: [`ReplayJobs`], bulk replays as durable jobs;
//! - `calls`: the values the runtime's calls carry and return.

mod calls;
mod keys;
mod replay_jobs;
mod reports;
mod store;
mod transfer;

pub use calls::{
    ClaimRequest, Finish, Finished, QuotaNote, Replayed, ResumePoint, Scheduled, TokenRequest,
    Tokens, TransitionOutcome,
};
pub use keys::Keys;
pub use replay_jobs::ReplayJobs;
pub use reports::Reports;
pub use store::Store;
pub use transfer::{DestinationRecord, Imported, TaskRecord, Transfer};
