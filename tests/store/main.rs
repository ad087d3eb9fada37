//! The store against real PostgreSQL. Each test has a schema of its own.

// Test code panics on unexpected errors by design.
#![allow(clippy::unwrap_used)]

mod alert_marks_upgrade;
mod alert_plans;
mod audit;
mod audit_log;
mod behind_pgbouncer;
mod big_tables;
mod claim_cost;
mod concurrency;
mod conformance;
mod connect;
mod console_plans;
mod destinations;
mod empty_start;
mod failover;
mod fairness;
mod fencing;
mod file_modes;
mod finish_locks;
mod hot_claim;
mod hot_path_plans;
mod hour_contention;
mod migration_lint;
mod migration_locks;
mod ordering_cost;
mod ordering_race;
mod payloads;
mod pooler_settings;
mod queue_mirror;
mod reconcile;
mod recovery;
mod regions;
mod replay_jobs;
mod replica;
mod retention;
mod schedule;
mod secrets_at_rest;
mod sqlite_erasure;
mod test_schemas;
mod tls;
mod upgrade;

use remit_testkit::{cluster, db as support, pgbouncer};
