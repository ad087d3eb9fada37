//! The `Store` trait: every operation the runtime may perform on the
//! durable schedule, each one short transaction (see the module root's
//! notes on transactions and dropped futures).

use std::future::Future;

use chrono::{DateTime, Duration, Utc};

use crate::domain::{
    ApiToken, Attempt, AttemptRecord, ClaimedTask, Destination, DestinationEvent, DestinationId,
    FailureReason, Lease, NewApiToken, NewDestination, NewTask, Payload, PruneReport, PruneRequest,
    ReconcileReport, ReconcileRequest, Region, Rotation, SendTarget, SigningSecret, Task, TaskId,
    TokenHash, TokenId,
};
use crate::policy::Decision;
use crate::store::{
    ClaimRequest, Finish, Finished, QuotaNote, Replayed, Scheduled, StoreError, TokenRequest,
    Tokens, TransitionOutcome,
};

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
    fn hand_back(
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
            let mut outcomes = self.finish_many(std::slice::from_ref(&one)).await?.outcomes;
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
    ///
    /// It tells also which destinations the batch disabled. Each applied finish counts toward its destination's
    /// failure streak (`policy::Health`): a failure grows it, and the one
    /// that makes it long enough in both count and time (the destination's
    /// own thresholds, or the store's [`DisableRule`](crate::policy::DisableRule))
    /// disables the destination in the same transaction; a success ends
    /// it, and writes nothing when there is none. A batch's finishes count
    /// in the batch's order, exactly as if each came alone (see
    /// `store/rules/health.rs`); each disabled destination is reported as the
    /// whole batch left it.
    fn finish_many(
        &self,
        batch: &[Finish],
    ) -> impl Future<Output = Result<Finished, StoreError>> + Send;

    /// Records why the address policy refuses `id`, now (`remit status`
    /// lists it).
    fn mark_refused(
        &self,
        id: &DestinationId,
        why: String,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Disables a destination by hand (`reason`, or `manual`): its tasks
    /// wait, unsent, until it is enabled or their horizon passes. One
    /// already disabled keeps its reason and time. `NotFound` when there
    /// is no such destination.
    fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

    /// Settles the tasks of the region's disabled destinations, up to
    /// `limit` of each kind: an expired lease (which no claim takes, since
    /// claims pass disabled destinations by) is handed back with its lost
    /// attempt logged as `abandoned`; a task not leased whose retry horizon
    /// has passed (the store's now) fails with `destination_disabled`: it
    /// could not be sent before it, and would otherwise wait forever, and
    /// an ordering line behind it moves on. Returns how many it failed.
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
