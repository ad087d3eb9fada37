//! The runtime end to end: real PostgreSQL (and SQLite where a test says
//! so), real HTTP on 127.0.0.1:0.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use remit_testkit::runtime as support;

mod announced_quota;
pub(crate) mod api;
mod console;
mod database_crash;
mod destination_reads;
mod disabled_unsent;
mod eviction;
mod failing_claims;
mod failover;
mod fairness;
mod hostile;
mod in_flight;
mod keys;
mod listener;
mod long_overdue;
mod on_time;
mod operational_events;
mod ordering;
mod own_rates;
mod poison;
mod rate_change;
mod regional_events;
mod replay_jobs;
mod residency;
mod retention;
mod retry_after;
mod shared_work;
mod signatures;
mod ssrf;
mod steady_rate;
mod tenant_turns;
mod tls;
mod traces;
mod transfer;
mod transfer_traces;
