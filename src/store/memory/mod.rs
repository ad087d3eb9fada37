//! `MemStore`: the schedule as a model in memory. It is the reference the
//! simulation runs thousands of schedules a second against, and the store
//! conformance suite holds it to the same behaviour as `PgStore`. Not for
//! production: nothing survives the process.
//!
//! Its clock must be pinned (there is no database clock to ask); time only
//! moves when the caller moves it.
//!
//! # Layout
//! - `store`: `MemStore`, a handle on the model (clones share it).
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
mod store;
mod transfer;
mod upkeep;

pub use store::MemStore;
