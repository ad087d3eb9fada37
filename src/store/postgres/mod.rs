//! The PostgreSQL store: [`PgStore`] over a bb8 pool of diesel-async
//! connections, and everything that speaks PostgreSQL's SQL.

mod claim;
mod connect;
mod destinations;
pub(super) mod enums;
mod finish_many;
mod lease;
pub(super) mod migrate;
mod prepared;
mod rate;
mod reads;
mod reconcile;
mod replay;
mod retention;
pub(super) mod rows;
mod schedule;
mod schedule_many;
mod schema;
mod send_targets;
pub(super) mod status;
mod store;
mod tls;
mod tls_checks;
pub(super) mod transfer;
mod transitions;

pub use connect::{ConnectFailure, PgConnector, TlsFailure};
pub use rate::Tokens;
pub use replay::Replayed;
pub use store::{PgConfig, PgStore};
pub use tls::{SslMode, TlsSettingsError};
pub use transitions::{CRASH_EXIT_CODE, IN_FINISH_FAILPOINT};

// The store's shared names, as the files here name them (`super::…`).
use super::{
    lifecycle, notify, rules, schema_version, ClaimRequest, Clock, DatabaseUrl, Finish, Scheduled,
    Store, StoreError, StoreStats, TokenRequest, TransitionOutcome,
};
