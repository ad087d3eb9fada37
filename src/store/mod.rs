//! The durable schedule. The only module that names diesel.
//!
//! # Layout
//! The root holds what every store shares; each backend has a folder.
//!
//! ```text
//! src/store/
//! ├── mod.rs          the Store trait
//! ├── calls.rs        the values its calls carry and return
//! ├── database/       Database: the store a process runs on, by URL
//! │   ├── url.rs          which backend a URL names
//! │   ├── store.rs        the Store trait, passed to the backend
//! │   └── extras.rs       status, export/import, refusals, key check
//! ├── lifecycle.rs    each transition's rules, written once
//! ├── bucket.rs  quota.rs  claim_turn.rs  findings.rs  rules.rs  import_rules.rs
//! ├── ordering.rs     which keyed rows wait in their line
//! ├── columns.rs      state and outcome labels, corrupt-column errors
//! ├── status.rs  transfer.rs     the reports' and records' types
//! ├── notify.rs  payload_keys.rs  schema_version.rs  sandbox.rs
//! ├── secrets.rs      signing secrets sealed at rest
//! ├── rekey.rs        re-sealing under the newest payload key
//! ├── token_rows.rs   API tokens as every store keeps them
//! ├── clock.rs  error.rs  stats.rs
//! ├── postgres/       PgStore: every statement PostgreSQL runs
//! ├── sqlite/         SqliteStore: the embedded file
//! └── memory/         MemStore: the model the simulation explores
//! ```
//!
//! - [`Store`]: the operations the runtime may perform, each one short
//!   transaction (most are one statement) that never waits on anything but
//!   SQL. A one-item call is its batch call with one item.
//! - `database`: [`Database`], chosen by its URL (`postgres://…` or
//!   `sqlite://PATH`); nothing outside `store` names a backend, and the
//!   shared files never call one: every call beside the trait (status,
//!   export and import, refusals, the payload key) is passed to the
//!   backend in `database/extras.rs`, so backends import the shared types
//!   and nothing imports back.
//! - `postgres`: [`PgStore`] over a bb8 pool, with its connections, TLS,
//!   SQL, diesel schema and migrations (its own Layout says which file
//!   holds what).
//! - `sqlite`: [`SqliteStore`], one file, one connection per process, each
//!   write a `BEGIN IMMEDIATE` transaction.
//! - `memory`: [`MemStore`], the same behaviour as a model in memory, for
//!   the simulation; the conformance suite holds all three to one
//!   behaviour.
//! - `health`: what an ended attempt does to its destination's failure
//!   streak, and the disable it may tip (`policy::health` holds the rule);
//! - `lifecycle`: each transition's rules, written once (the states it
//!   leaves, the lease guard, what it writes and logs, what a repeat or a
//!   stale lease gets); `bucket`: the shared token bucket, paced by the
//!   quota a receiver announced (`quota`: how that is recorded);
//!   `claim_turn`: which rows a claim takes (turns over destinations and
//!   their tenants); `ordering`: which keyed rows wait behind an earlier row
//!   of their line; `findings`: what reconciliation reports;
//!   `rules`: what a destination or task must be before any store writes
//!   it; `import_rules`: the same for an imported record. The model and
//!   SQLite apply them to rows they read; PostgreSQL's statements take
//!   their targets from them.
//! - `columns`: how every store writes states and outcomes, and the error
//!   for a column that holds what no build wrote.
//! - `status`, `transfer`: the types `remit status` and `remit export` /
//!   `import` carry; each backend fills them.
//! - `rekey`: re-sealing under the newest payload key, in batches.
//! - `secrets`: signing secrets at rest, sealed with the payload key, and
//!   their exported form.
//! - `notify`: the wake-ups a claimer and a sender hear (LISTEN/NOTIFY on
//!   PostgreSQL, a broadcast inside the process on SQLite).
//! - `payload_keys`: whether the configured ring of keys holds every key
//!   the database's payloads and secrets are sealed with; `schema_version`: whether a database's
//!   migrations are the binary's.
//! - `sandbox`: a throwaway database of remit's own (a SQLite file in a
//!   temporary directory, or a schema inside a PostgreSQL).
//! - `token_rows`: an API token's columns as every store reads them back.
//! - `clock`: the single authority for "now"; `error`: [`StoreError`];
//!   `stats`: counters of claims, reclaims and fenced finishes;
//!   `finish_failpoint`: the failpoint inside every store's finish.
//!
//! # Transactions and dropped futures
//! A caller may drop a store call's future halfway (shutdown, a deadline).
//! Dropped inside an explicit transaction, its pooled connection would sit
//! "idle in transaction", holding its row locks until the connection
//! closes: diesel-async counts such a connection as broken and never hands
//! it out again, but the server rolls back only once the socket is gone.
//! So the hot calls are one statement each, which PostgreSQL commits or
//! rolls back on its own: the claim, the token take (`postgres/rate`,
//! which turns off the commit's flush for itself with
//! `set_config(…, true)`), a finish batch without pauses, release and the
//! other single-row transitions.
//! The explicit transactions left are short and wait on nothing but SQL:
//! a finish batch with pauses (`postgres/finish_many`: the pauses and the
//! attempts must commit together); `schedule_many` (a payload and its task
//! together); `postgres/transfer`'s import (all or nothing);
//! `postgres/payload_keys`' record (once at start); a destination's
//! registration with its secret, and a rotation (`postgres/secrets`, which
//! holds the destination's row); a rekey batch (`postgres/rekey`, which
//! locks only the rows it rewrites);
//! `postgres/status`'s read-only snapshot (no locks);
//! and, with failpoints compiled in, the finish (so a test can fail it
//! before its commit). On SQLite the hazard does not arise: each operation
//! runs whole on a blocking thread, whatever becomes of its future, and a
//! panic inside it rolls back through a fresh connection.
//!
//! Every statement that locks several destination rows (token takes, a
//! batch of pauses) locks them in id order, so two of them never deadlock.

mod bucket;
mod calls;
mod claim_turn;
mod clock;
mod columns;
pub mod console;
mod database;
mod error;
mod findings;
mod finish_failpoint;
mod health;
mod import_rules;
mod lifecycle;
mod memory;
mod next_due;
mod notify;
mod ordering;
mod payload_keys;
mod postgres;
mod quota;
mod rekey;
mod rules;
mod sandbox;
mod schema_version;
mod secrets;
mod sqlite;
mod stats;
mod status;
mod token_rows;
mod transfer;

use std::future::Future;

use chrono::{DateTime, Duration, Utc};

pub use calls::{
    ClaimRequest, Finish, Finished, QuotaNote, Replayed, ResumePoint, Scheduled, TokenRequest,
    Tokens, TransitionOutcome,
};
pub use clock::Clock;
pub use database::{migrate, Database, DatabaseConfig, DatabaseUrl, DEFAULT_DATABASE_URL};
pub use error::StoreError;
pub use finish_failpoint::{CRASH_EXIT_CODE, IN_FINISH_FAILPOINT};
pub use health::AutoDisabled;
pub use import_rules::{
    check_imported_destination, check_imported_task, ImportCheck, MAX_IMPORTED_LEASE_TOKEN,
};
pub use memory::MemStore;
pub use notify::{Wakeup, Wakeups};
/// The console's PostgreSQL statements, for the test that checks their
/// plans.
#[doc(hidden)]
pub use postgres::console_sql;
pub use postgres::status_sql;
pub use postgres::{
    ConnectFailure, PgConfig, PgConnector, PgStore, SslMode, TlsFailure, TlsSettingsError,
};
pub use rekey::{KeyCount, Rekeyed};
pub use sandbox::{create_schema, drop_schema, Sandbox};
pub use schema_version::SchemaMismatch;
pub use secrets::{SecretRecord, StoredValue};
pub use sqlite::SqliteStore;
pub use stats::StoreStats;
pub use status::{Latency, Refused, RegionStatus, StatusReport};
pub use transfer::{DestinationRecord, Imported, TaskRecord};

use crate::domain::{
    ApiToken, Attempt, AttemptRecord, ClaimedTask, Destination, DestinationEvent, DestinationId,
    FailureReason, Lease, NewApiToken, NewDestination, NewTask, Payload, PruneReport, PruneRequest,
    ReconcileReport, ReconcileRequest, Region, Rotation, SendTarget, SigningSecret, Task, TaskId,
    TokenHash, TokenId,
};
use crate::policy::Decision;

/// The durable schedule's operations. Each is said once: a one-item call
/// (`take_tokens`, `schedule`, `finish`) is its batch call with one item,
/// so a store implements only the batch.
pub trait Store: Sync {
    /// Registers a destination; the same registration again is a no-op,
    /// the same id with other settings is a `Conflict`.
    fn add_destination(
        &self,
        new: NewDestination,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

    fn destination(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Option<Destination>, StoreError>> + Send;

    /// The destination with its valid secrets and what is left of its pause, read
    /// right before a request.
    fn send_target(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Option<SendTarget>, StoreError>> + Send {
        let ids = [id.clone()];
        async move { Ok(self.send_targets(&ids).await?.pop().flatten()) }
    }

    /// [`Store::send_target`] for many destinations at once, read together:
    /// the answers come back in order, `None` for a destination that does
    /// not exist.
    fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> impl Future<Output = Result<Vec<Option<SendTarget>>, StoreError>> + Send;

    /// Adds the rotation's secret to the destination and ends every secret
    /// valid until now at the rotation's `old_expires_at` (a secret that
    /// ends sooner keeps its end), all in one transaction; the new secret
    /// has no end. Answers the new secret (without its value); a
    /// destination that does not exist is `NotFound`.
    fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> impl Future<Output = Result<SigningSecret, StoreError>> + Send;

    /// The destination's secrets, ended ones included, oldest first,
    /// without their values; a destination that does not exist is
    /// `NotFound`.
    fn signing_secrets(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Vec<SigningSecret>, StoreError>> + Send;

    /// Holds every task of the destination for `pause` from the store's
    /// now (its clock, not the caller's); an existing later pause wins.
    /// Returns the pause now in force.
    fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> impl Future<Output = Result<DateTime<Utc>, StoreError>> + Send;

    /// Takes up to `want` tokens from the destination's shared bucket; a
    /// destination that does not exist is `NotFound`. A batch of one.
    fn take_tokens(
        &self,
        id: &DestinationId,
        rate_per_second: f64,
        burst: u32,
        want: u32,
    ) -> impl Future<Output = Result<Tokens, StoreError>> + Send {
        let ask = TokenRequest {
            destination: id.clone(),
            rate_per_second,
            burst,
            want,
        };
        async move {
            match self.take_tokens_many(std::slice::from_ref(&ask)).await?[..] {
                [Some(tokens)] => Ok(tokens),
                _ => Err(StoreError::NotFound {
                    what: "destination",
                    id: ask.destination.to_string(),
                }),
            }
        }
    }

    /// Takes from many buckets at once, up to each ask's `want` from its
    /// destination's shared bucket: the answers come back in order, `None`
    /// for a destination that does not exist.
    fn take_tokens_many(
        &self,
        asks: &[TokenRequest],
    ) -> impl Future<Output = Result<Vec<Option<Tokens>>, StoreError>> + Send;

    /// Records what receivers announced of their quotas: each destination's
    /// remaining requests until its reset (the store's now plus the note's
    /// `resets_in`), by which token takes pace it until then, across every
    /// process of the region. The last note for a destination in a batch
    /// wins; a destination that does not exist is skipped.
    fn learn_quotas(
        &self,
        notes: &[QuotaNote],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Schedules one logical webhook; idempotent on (tenant, reminder). A
    /// batch of one: its answer, or the store's failure.
    fn schedule(&self, new: NewTask) -> impl Future<Output = Result<Scheduled, StoreError>> + Send {
        async move {
            let mut answers = self.schedule_many(vec![new]).await?;
            answers
                .pop()
                .unwrap_or_else(|| Err(StoreError::Thread("no answer for the task".into())))
        }
    }

    /// Schedules many at once, each idempotent on (tenant, reminder): the
    /// same request again is a repeat (`created` false), other content
    /// under the same (tenant, reminder) a `Conflict`. Each task gets its
    /// own answer, in order (an `Invalid` or `Conflict` of its own never
    /// affects its neighbours); the call itself fails only when the store
    /// does, and then writes nothing half-done for any task.
    fn schedule_many(
        &self,
        batch: Vec<NewTask>,
    ) -> impl Future<Output = Result<Vec<Result<Scheduled, StoreError>>, StoreError>> + Send;

    fn task(&self, id: TaskId) -> impl Future<Output = Result<Option<Task>, StoreError>> + Send;

    /// The task's attempt log, oldest first.
    fn attempts(&self, id: TaskId)
        -> impl Future<Output = Result<Vec<Attempt>, StoreError>> + Send;

    /// Sends a failed task round again with a fresh horizon.
    fn replay(
        &self,
        id: TaskId,
        horizon: Duration,
    ) -> impl Future<Output = Result<Replayed, StoreError>> + Send;

    /// Runs the reconciliation checks (and, when asked, hands expired
    /// leases back).
    fn reconcile(
        &self,
        request: &ReconcileRequest,
    ) -> impl Future<Output = Result<ReconcileReport, StoreError>> + Send;

    /// Deletes delivered and failed tasks that ended longer ago than
    /// `request.older_than` (on the store's clock), with their attempts and
    /// payloads, in batches of at most `request.batch_size` tasks, each in a
    /// transaction of its own, until a batch comes back short. Live tasks
    /// (pending, leased, retry_wait) are never touched. A pruned task's
    /// (tenant, reminder) may be scheduled again as a new task.
    fn prune(
        &self,
        request: &PruneRequest,
    ) -> impl Future<Output = Result<PruneReport, StoreError>> + Send;

    /// Checks that the database answers.
    fn ping(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The decrypted body of a task.
    fn payload(&self, task: &Task) -> impl Future<Output = Result<Payload, StoreError>> + Send;

    /// How long from the store's now until a claim of the region could next
    /// find work it cannot find now (`next_due.rs`): rows claimable already
    /// were left out by the claim that came back empty, so they do not
    /// count; `None` when nothing is coming (no live rows, or only rows of
    /// disabled destinations, or only rows left out now). A paused
    /// destination's rows count from the pause's end. The wait is measured on the store's clock, so a caller
    /// that sleeps for it wakes when the claim's own clock check passes,
    /// whatever its own clock says. It reads every destination of the
    /// region with live rows, as a claim that finds nothing does.
    fn next_due(
        &self,
        region: Region,
    ) -> impl Future<Output = Result<Option<Duration>, StoreError>> + Send;

    /// Leases due rows and expired leases of one region in one statement.
    fn claim_due(
        &self,
        request: &ClaimRequest,
    ) -> impl Future<Output = Result<Vec<ClaimedTask>, StoreError>> + Send;

    fn fail(
        &self,
        lease: &Lease,
        reason: &FailureReason,
        record: &AttemptRecord,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Ends an attempt whose outcome is unknown (the request may have gone
    /// out): it counts, is logged as `abandoned`, and the task is due again.
    fn abandon(
        &self,
        lease: &Lease,
        record: &AttemptRecord,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Gives the lease back without counting an attempt, eligible again
    /// about `after` from the store's now when given (the store's clock, not
    /// the caller's; an estimate, so never past the retry horizon), and never
    /// before its destination's pause ends. When nothing can happen before
    /// the horizon (it has passed, or the destination's pause outlasts it),
    /// the task fails with `retry_horizon` and the answer is `PastHorizon`.
    fn release(
        &self,
        lease: &Lease,
        after: Option<Duration>,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Pushes the lease's expiry to `by` from now (never earlier than it is).
    fn extend_lease(
        &self,
        lease: &Lease,
        by: Duration,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send;

    /// Applies one policy decision: a batch of one.
    fn finish(
        &self,
        lease: &Lease,
        destination: &DestinationId,
        decision: &Decision,
    ) -> impl Future<Output = Result<TransitionOutcome, StoreError>> + Send {
        let one = Finish {
            lease: lease.clone(),
            destination: destination.clone(),
            decision: decision.clone(),
        };
        async move {
            let mut outcomes = self.finish_many(std::slice::from_ref(&one)).await?;
            outcomes
                .pop()
                .ok_or_else(|| StoreError::Thread("no answer for the finish".into()))
        }
    }

    /// Applies policy decisions: each the matching finish, and the
    /// destination pause it asks for, both set as the decision's delays
    /// from the store's now (a lease owner's clock only measured how long the
    /// receiver asked for). The answers come back in order, one per
    /// finish, and fencing stays per row (a stale lease is refused on its
    /// own and changes nothing). A store with transactions commits the
    /// whole batch, pauses included, at once; when it fails, nothing of
    /// the batch is written.
    fn finish_many(
        &self,
        batch: &[Finish],
    ) -> impl Future<Output = Result<Vec<TransitionOutcome>, StoreError>> + Send {
        async move { Ok(self.finish_batch(batch).await?.outcomes) }
    }

    /// [`Store::finish_many`], telling also which destinations the batch
    /// disabled. Each applied finish counts toward its destination's
    /// failure streak (`policy::Health`): a failure grows it, and the one
    /// that makes it long enough in both count and time (the destination's
    /// own thresholds, or the store's [`DisableRule`](crate::policy::DisableRule))
    /// disables the destination in the same transaction; a success ends
    /// it, and writes nothing when there is none.
    fn finish_batch(
        &self,
        batch: &[Finish],
    ) -> impl Future<Output = Result<Finished, StoreError>> + Send;

    /// Disables a destination by hand (`reason`, or `manual`): its tasks
    /// wait, unsent, until it is enabled or their horizon passes. One
    /// already disabled keeps its reason and time. `NotFound` when there
    /// is no such destination.
    fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

    /// Fails, with `destination_disabled`, up to `limit` unleased tasks of
    /// the region whose destination is disabled and whose retry horizon
    /// has passed (the store's now): they could not be sent before it, and
    /// would otherwise wait forever. Returns how many it failed.
    fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Up to `limit` of the region's operational events not yet turned
    /// into webhooks, oldest first. A destination disabled by a finish or
    /// by hand, or enabled, writes one in the same transaction.
    fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<DestinationEvent>, StoreError>> + Send;

    /// Deletes the events with these ids (they have been scheduled);
    /// returns how many were there.
    fn forget_destination_events(
        &self,
        ids: &[uuid::Uuid],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Enables a destination, clearing its failure streak and the reason
    /// it was disabled, and wakes the region's claimers.
    fn enable_destination(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

    /// Stores an API token (its hash, never the token), made at the
    /// store's now. An id or hash already stored is a `Conflict`.
    fn add_api_token(
        &self,
        new: NewApiToken,
    ) -> impl Future<Output = Result<ApiToken, StoreError>> + Send;

    /// The token whose SHA-256 is `hash`, revoked and expired ones
    /// included (the caller decides at its now): one indexed read.
    fn api_token_by_hash(
        &self,
        hash: &TokenHash,
    ) -> impl Future<Output = Result<Option<ApiToken>, StoreError>> + Send;

    /// Every API token, oldest first (ties by id).
    fn api_tokens(&self) -> impl Future<Output = Result<Vec<ApiToken>, StoreError>> + Send;

    /// Revokes the token from the store's now; a token revoked before
    /// keeps its first revocation. `None` for an id no token has.
    fn revoke_api_token(
        &self,
        id: &TokenId,
    ) -> impl Future<Output = Result<Option<ApiToken>, StoreError>> + Send;
}
