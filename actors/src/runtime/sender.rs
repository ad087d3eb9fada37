//! A Sender: POSTs claimed tasks (many at once, each in its own future),
//! runs the outcome through the policy and commits the matching fenced
//! transition before telling anyone the task is done.
//!
//! A sender that fails (an error it cannot handle, a failpoint, a caught
//! panic) stops; its supervisor restarts it, and the tasks it held are
//! released at once so another attempt can start without waiting for the
//! lease to expire. The idempotency key makes the possible duplicate safe.

use std::cell::Cell;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::time::Instant;

use actix::prelude::*;
use chrono::Utc;
use futures_util::FutureExt;
use remit::policy::{decide, Observed, Transition};
use remit::store::{Store, TransitionOutcome};
use slog::{error, info, warn};

use super::failpoint::{self, Injected};
use super::messages::{Abandon, Deliver, Sent, Work};
use super::throttle::release;
use super::{transport, RuntimeStats, Shared};
use crate::signature;

pub struct Sender {
    shared: Shared,
    client: awc::Client,
    /// Sends under way, by a number per delivery: the same task can be in
    /// here twice (a stale lease and its reclaim), and each must be
    /// accounted for on its own.
    held: HashMap<u64, Held>,
    next_delivery: u64,
}

/// One task a sender is carrying.
struct Held {
    work: Work,
    /// The throttle to tell when the request is over.
    throttle: Recipient<Sent>,
    /// Set just before the request goes out: from then on the receiver may
    /// have it, so giving the task back counts as an attempt.
    sent: Rc<Cell<bool>>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("held", &self.held.len())
            .finish_non_exhaustive()
    }
}

/// Why one delivery could not be carried through.
#[derive(Debug, thiserror::Error)]
enum SendFailure {
    #[error(transparent)]
    Store(#[from] remit::store::StoreError),
    #[error(transparent)]
    Injected(#[from] Injected),
    #[error("destination {0} no longer exists")]
    NoDestination(String),
    #[error("the send panicked")]
    Panicked,
}

impl Sender {
    pub fn new(shared: Shared) -> Self {
        Self {
            client: transport::client(shared.send_timeout()),
            shared,
            held: HashMap::new(),
            next_delivery: 0,
        }
    }

    /// Hands back everything held (on restart or abandon): tasks not yet
    /// sent are released; tasks that may have reached the receiver are
    /// abandoned, which counts the attempt. Either way they are due again
    /// at once instead of after their lease.
    fn release_held(&mut self) {
        for (_, held) in self.held.drain() {
            hand_back(&self.shared, held);
        }
    }
}

/// Gives one held task back to the database: released if its request never
/// went out, abandoned (the attempt counts) if it may have.
fn hand_back(shared: &Shared, held: Held) {
    held.throttle.do_send(Sent { pause_until: None });
    if !held.sent.get() {
        release(shared, vec![held.work], None);
        return;
    }
    let shared = shared.clone();
    actix_rt::spawn(async move {
        let lease = held.work.claimed.lease();
        let record = remit::domain::AttemptRecord::default();
        if let Err(e) = shared.store.abandon(&lease, &record).await {
            warn!(shared.log, "abandon failed; the lease will expire";
                  "task" => %lease.task_id, "error" => %crate::error_chain(&e));
        }
        shared.capacity.give_back();
    });
}

/// Carries one task through send, policy and finish. Returns the pause the
/// receiver asked for, if any.
async fn deliver(
    shared: Shared,
    client: awc::Client,
    work: Work,
    sent: Rc<Cell<bool>>,
) -> Result<Option<chrono::DateTime<Utc>>, SendFailure> {
    let task = &work.claimed.task;
    let lease = work.claimed.lease();
    let log = shared.log.new(slog::o!(
        "task" => task.id.to_string(), "destination" => task.destination_id.to_string(),
        "attempt" => task.attempt_count, "lease_owner" => shared.consumer.to_string()));

    // A task whose attempts were used up by consumers that died with it (a
    // payload that crashes every sender, say) is not sent yet again. The
    // budget counts from the last replay, which grants a fresh one.
    if task.attempts_since_replay() > shared.policy.max_attempts {
        let reason = remit::domain::FailureReason::MaxAttempts;
        let record = remit::domain::AttemptRecord::default();
        shared.store.fail(&lease, &reason, &record).await?;
        RuntimeStats::bump(&shared.stats.failed);
        warn!(log, "attempts used up by consumers that never reported; failed unsent";
              "outcome" => "failed", "reason" => reason.code());
        return Ok(None);
    }

    let destination = shared
        .store
        .destination(&task.destination_id)
        .await?
        .ok_or_else(|| SendFailure::NoDestination(task.destination_id.to_string()))?;
    let secret = match shared.store.signing_secret(&task.destination_id).await? {
        // A stored secret was validated when it was added.
        Some(s) => signature::secret_key(&s).ok(),
        None => None,
    };
    let payload = match shared.store.payload(task).await {
        Ok(payload) => payload,
        // This process cannot open it (another key sealed it). Not the
        // sender's fault and not the task's: hand it back for a while so a
        // process with the right key can take it, instead of failing the
        // actor over and over.
        Err(remit::store::StoreError::Payload(e)) => {
            error!(log, "cannot open the payload; handing the task back"; "error" => %e);
            let later = Utc::now() + chrono::Duration::minutes(1);
            shared.store.release(&lease, Some(later)).await?;
            RuntimeStats::bump(&shared.stats.released);
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };

    // Never start a request the lease may not outlive (checked after the
    // lookups above, which wait for pooled connections).
    let deadline = work.claimed_at + shared.lease() - shared.send_timeout();
    if Instant::now() >= deadline {
        info!(log, "lease too close to expiry; handing the task back");
        shared.store.release(&lease, None).await?;
        RuntimeStats::bump(&shared.stats.released);
        return Ok(None);
    }

    failpoint::hit(failpoint::BEFORE_SEND)?;
    sent.set(true);
    let started_at = Utc::now();
    let response = transport::post(
        &client,
        destination.url.as_str(),
        task,
        &payload,
        secret.as_deref(),
        shared.config.send.max_response_bytes,
    )
    .await;
    let received_at = Utc::now();
    failpoint::hit(failpoint::AFTER_RESPONSE)?;

    let observed = Observed {
        attempt: task.attempts_since_replay().max(1),
        retry_horizon_at: task.retry_horizon_at,
        started_at,
        received_at,
        response,
    };
    let decision = decide(&observed, &shared.policy, &mut rand::rng());
    let outcome = shared
        .store
        .finish(&lease, &task.destination_id, &decision)
        .await?;
    let status = decision.record.http_status;
    let stats = &shared.stats;
    if status == Some(429) {
        RuntimeStats::bump(&stats.rate_limited);
    }
    match (outcome, &decision.transition) {
        (TransitionOutcome::Applied, Transition::Deliver) => {
            RuntimeStats::bump(&stats.delivered);
            info!(log, "delivered"; "status" => status, "outcome" => "delivered");
        }
        (TransitionOutcome::Applied, Transition::RetryWait { available_at }) => {
            RuntimeStats::bump(&stats.retry_wait);
            info!(log, "will retry"; "status" => status, "outcome" => "retry_wait",
                  "error" => decision.record.transport_error.as_deref(),
                  "retry_after" => decision.record.retry_after_raw.as_deref(),
                  "available_at" => %available_at);
        }
        (TransitionOutcome::Applied, Transition::Fail(reason)) => {
            RuntimeStats::bump(&stats.failed);
            warn!(log, "failed"; "status" => status, "outcome" => "failed", "reason" => reason.code());
        }
        (TransitionOutcome::Fenced, _) => {
            RuntimeStats::bump(&stats.fenced);
            warn!(log, "lease was lost before the finish; another consumer owns the task";
                  "status" => status, "outcome" => "fenced");
        }
        (TransitionOutcome::NotFound, _) => {
            warn!(log, "task vanished before the finish"; "outcome" => "not_found");
        }
    }
    failpoint::hit(failpoint::AFTER_FINISH)?;
    Ok(decision.pause_destination_until)
}

impl Actor for Sender {
    type Context = Context<Self>;
}

impl Supervised for Sender {
    fn restarting(&mut self, _ctx: &mut Context<Self>) {
        RuntimeStats::bump(&self.shared.stats.restarts);
        warn!(self.shared.log, "sender restarting"; "releasing" => self.held.len());
        self.release_held();
    }
}

impl Handler<Deliver> for Sender {
    type Result = ();

    fn handle(&mut self, Deliver { work, throttle }: Deliver, ctx: &mut Context<Self>) {
        let id = work.claimed.task.id;
        let number = self.next_delivery;
        self.next_delivery += 1;
        let sent = Rc::new(Cell::new(false));
        self.held.insert(
            number,
            Held {
                work: work.clone(),
                throttle,
                sent: sent.clone(),
            },
        );
        let attempt = deliver(self.shared.clone(), self.client.clone(), work, sent);
        AssertUnwindSafe(attempt)
            .catch_unwind()
            .map(|result| result.unwrap_or(Err(SendFailure::Panicked)))
            .into_actor(self)
            .map(move |result, this, ctx| match result {
                Ok(pause_until) => {
                    if let Some(held) = this.held.remove(&number) {
                        held.throttle.do_send(Sent { pause_until });
                        this.shared.capacity.give_back();
                    }
                }
                // A database error belongs to this task alone: hand it back
                // and keep the sender's other requests going.
                Err(SendFailure::Store(e)) => {
                    warn!(this.shared.log, "could not carry the task through; handing it back";
                          "task" => %id, "error" => %crate::error_chain(&e));
                    if let Some(held) = this.held.remove(&number) {
                        hand_back(&this.shared, held);
                    }
                }
                Err(e) => {
                    // The task stays in `held`: the restart hands it back
                    // along with every other send this actor had under way.
                    error!(this.shared.log, "send failed; restarting the sender";
                           "task" => %id, "error" => %crate::error_chain(&e));
                    ctx.stop();
                }
            })
            .spawn(ctx);
    }
}

impl Handler<Abandon> for Sender {
    type Result = ();

    fn handle(&mut self, _: Abandon, ctx: &mut Context<Self>) {
        self.release_held();
        ctx.stop();
    }
}
