//! One task's delivery, from the claim to the committed next state: what
//! the request needs and the checks before it, retried through a short
//! fault of the database ([`delivery::before_request`], the same code the
//! simulation runs), the request under one deadline, the policy, and the
//! finish (retried and kept alive by a lease heartbeat until it commits or
//! the lease is gone).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::delivery::{self, Prepared, Stop};
use remit::domain::{AttemptOutcome, ClaimedTask, DestinationId, Lease, Task};
use remit::policy::{decide, Decision, Gate, Observed, Transition, TransportError};
use remit::store::{Finish, Store, StoreError, TransitionOutcome};
use slog::{error, info, warn};

use super::consumer::{chrono_saturating, hold_refused, RuntimeConsumer};
use super::delivered::{count_hand_back, Delivered};
use super::failpoint::{self, Injected};
use super::{quotas, transport, BatchError, Shared};
use crate::signature;
use crate::telemetry::AttemptSpan;

/// Why one delivery could not be carried through.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryFailure {
    /// A store error before the request: nothing was sent.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The outcome could not be committed within the lease. The lease will
    /// expire and another attempt follow; the receiver's pause, if it asked
    /// for one, holds here until `pause` and is still to be committed.
    #[error("the outcome could not be recorded within the lease")]
    Unrecorded {
        #[source]
        source: BatchError,
        pause: Option<Instant>,
    },
    #[error(transparent)]
    Injected(#[from] Injected),
    #[error("destination {0} no longer exists")]
    NoDestination(String),
}

/// Carries one task through, its request sent with the token numbered
/// `token`. `sent` is set just before the request goes out: from then on
/// the receiver may have it.
pub async fn deliver(
    shared: Shared,
    client: awc::Client,
    claimed: ClaimedTask,
    claimed_at: Instant,
    token: u64,
    sent: Rc<Cell<bool>>,
) -> Result<Delivered, DeliveryFailure> {
    let task = &claimed.task;
    let lease = claimed.lease();
    let mut span = AttemptSpan::start(&shared.telemetry, task);
    let log = shared.log.new(slog::o!(
        "task" => task.id.to_string(), "destination" => task.destination_id.to_string(),
        // The region's logger already carries the lease owner.
        "attempt" => task.attempt_count));
    let log = match span.trace_id() {
        Some(trace_id) => log.new(slog::o!("trace_id" => trace_id.to_owned())),
        None => log,
    };

    let lease_ends = Rc::new(Cell::new(claimed_at + shared.lease()));
    let needed = chrono_saturating(shared.send_timeout() + shared.finish_margin());
    let consumer = RuntimeConsumer {
        shared: &shared,
        lease_ends: &lease_ends,
        log: &log,
    };
    let prepared =
        delivery::before_request(&shared.store, &claimed, &shared.policy, needed, &consumer)
            .await
            .map_err(|e| match e {
                StoreError::NotFound {
                    what: "destination",
                    id,
                } => DeliveryFailure::NoDestination(id),
                e => DeliveryFailure::Store(e),
            })?;
    let (payload, target) = match prepared {
        Prepared::Ready { payload, target } => (payload, target),
        Prepared::Stopped(stop) => {
            // The task is back already; the hold keeps this process's other
            // tasks of the destination from being looked at meanwhile.
            if let Stop::Refused { why, .. } = &stop {
                hold_refused(&shared, &task.destination_id, why, &log).await;
            }
            let delivered = stopped(&shared, &stop, task, &log);
            span.unsent(match delivered {
                Delivered::Finished => "failed",
                Delivered::HandedBack => "handed_back",
            });
            return Ok(delivered);
        }
    };
    // Every secret valid at the time of sending signs; a stored secret was
    // validated when it was added.
    let keys: Vec<Vec<u8>> = target
        .secrets_at(shared.wall.now())
        .filter_map(|s| signature::secret_key(s).ok())
        .collect();

    failpoint::hit(failpoint::BEFORE_SEND)?;
    sent.set(true);
    let started_at = shared.wall.now();
    let webhook = transport::Webhook {
        url: &target.destination.url,
        task,
        payload: &payload,
        signing_keys: &keys,
        traceparent: span.traceparent(),
    };
    let limits = (shared.send_timeout(), shared.config.send.max_response_bytes);
    let (response, server_date, quota) =
        transport::exchange(&client, &shared.egress, webhook, limits).await;
    let received_at = shared.wall.now();
    let received = Instant::now();
    span.response(&response);
    quotas::learn(
        &shared,
        (&task.destination_id, token),
        &quota,
        (received_at, server_date),
        &log,
    );
    failpoint::hit(failpoint::AFTER_RESPONSE)?;
    if response == Err(TransportError::BlockedAddress) {
        // The host resolved only to addresses the policy refuses: nothing
        // was sent, so the task goes back as it came, like a refused URL,
        // and no attempt is counted even if this hand-back fails.
        sent.set(false);
        let why = "its host resolves only to addresses the address policy refuses";
        hold_refused(&shared, &task.destination_id, why, &log).await;
        let outcome = delivery::hand_back_refused(&shared.store, &claimed, &consumer)
            .await
            .map_err(DeliveryFailure::Store)?;
        span.unsent("handed_back");
        return Ok(count_hand_back(&shared, outcome, &log));
    }

    // The horizon as this process's clock sees it, like the times below.
    let lease_length = chrono_saturating(shared.lease());
    let claimed_wall = shared.wall.now() - chrono_saturating(claimed_at.elapsed());
    let observed = Observed {
        attempt: task.attempts_since_replay().max(1),
        retry_horizon_at: claimed.retry_horizon_seen_at(lease_length, claimed_wall),
        started_at,
        received_at,
        server_date,
        response,
    };
    let decision = decide(&observed, &shared.policy, &mut rand::rng());
    if let Some(until) = decision.pause_destination_until {
        // Known to this process from now on, before the finish commits:
        // nothing of this destination starts here until it ends.
        let left = (until - received_at).to_std().unwrap_or_default();
        shared.stats.metrics.paused(&task.destination_id);
        shared.pauses.hold(
            &task.destination_id,
            left.saturating_sub(received.elapsed()),
        );
    }
    let destination = &task.destination_id;
    let outcome = finish(&shared, destination, &lease, &decision, &lease_ends, &log)
        .await
        .map_err(|source| DeliveryFailure::Unrecorded {
            source,
            pause: decision
                .pause_delay()
                .and_then(|d| d.to_std().ok())
                .and_then(|d| received.checked_add(d)),
        })?;
    report(&shared, &log, task, outcome, &decision);
    span.finished(outcome, &decision);
    failpoint::hit(failpoint::AFTER_FINISH)?;
    Ok(Delivered::Finished)
}

/// Counts and logs a task that was not sent; the store has it already.
fn stopped(shared: &Shared, stop: &Stop, task: &Task, log: &slog::Logger) -> Delivered {
    let stats = &shared.stats;
    let outcome = match stop {
        Stop::Unreadable { error, outcome } => {
            error!(log, "cannot open the payload; handing the task back"; "error" => %error);
            *outcome
        }
        Stop::Refused { outcome, .. } => *outcome,
        Stop::Checks {
            gate,
            paused,
            outcome,
        } => {
            if let (Gate::Fail(reason), TransitionOutcome::Applied) = (gate, outcome) {
                stats.metrics.failed(&reason.code());
                stats
                    .metrics
                    .attempt(&task.destination_id, AttemptOutcome::Failed);
                warn!(log, "failed unsent"; "outcome" => "failed", "reason" => reason.code());
                return Delivered::Finished;
            }
            if let Gate::HandBack { after } = gate {
                info!(log, "handing back unsent"; "paused" => paused,
                      "after_ms" => after.map(|a| a.num_milliseconds()));
            }
            *outcome
        }
    };
    count_hand_back(shared, outcome, log)
}

/// Commits the decision, retrying a failed write while the lease lasts
/// (and at most a few leases in all, since the heartbeat keeps extending
/// it) and extending the lease while a slow write is under way.
async fn finish(
    shared: &Shared,
    destination: &DestinationId,
    lease: &Lease,
    decision: &Decision,
    lease_ends: &Rc<Cell<Instant>>,
    log: &slog::Logger,
) -> Result<TransitionOutcome, BatchError> {
    let give_up = Instant::now() + shared.lease() * 3;
    let commit = async {
        let mut wait = Duration::from_millis(50);
        loop {
            let one = Finish {
                lease: lease.clone(),
                destination: destination.clone(),
                decision: decision.clone(),
            };
            match shared.finisher.call(one).await {
                Ok(outcome) => return Ok(outcome),
                Err(e)
                    if lease_ends.get().saturating_duration_since(Instant::now()) > wait
                        && Instant::now() + wait < give_up =>
                {
                    warn!(log, "could not record the outcome; trying again";
                          "error" => %crate::error_chain(&e));
                    actix_rt::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(1));
                }
                Err(e) => return Err(e),
            }
        }
    };
    tokio::select! {
        result = commit => result,
        never = heartbeat(shared, lease, lease_ends, log) => match never {},
    }
}

/// Keeps the lease ahead of a finish that is taking long: shortly before
/// it would end, extends it by a whole lease. Runs until dropped.
async fn heartbeat(
    shared: &Shared,
    lease: &Lease,
    lease_ends: &Rc<Cell<Instant>>,
    log: &slog::Logger,
) -> std::convert::Infallible {
    let margin = shared.finish_margin() / 2;
    let by = chrono::Duration::from_std(shared.lease()).unwrap_or(chrono::Duration::MAX);
    loop {
        let wake = lease_ends
            .get()
            .checked_sub(margin)
            .unwrap_or_else(Instant::now);
        actix_rt::time::sleep_until(wake.into()).await;
        let asked = Instant::now();
        match shared.store.extend_lease(lease, by).await {
            Ok(TransitionOutcome::Applied) => {
                info!(log, "finish is slow; lease extended");
                lease_ends.set(asked + shared.lease());
            }
            // The lease moved on; the finish will be told it is fenced.
            Ok(_) => std::future::pending::<()>().await,
            Err(e) => {
                warn!(log, "could not extend the lease"; "error" => %crate::error_chain(&e));
                actix_rt::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Counts and logs what the finish did.
fn report(
    shared: &Shared,
    log: &slog::Logger,
    task: &Task,
    outcome: TransitionOutcome,
    decision: &Decision,
) {
    let status = decision.record.http_status;
    let stats = &shared.stats;
    let metrics = &stats.metrics;
    let destination = &task.destination_id;
    if status.is_some() || decision.record.transport_error.is_some() {
        metrics.response(destination, status);
    }
    match (outcome, &decision.transition) {
        (TransitionOutcome::Applied, Transition::Deliver) => {
            metrics.attempt(destination, AttemptOutcome::Delivered);
            // On the store's side of the exchange: the answer's arrival.
            if let Some(received) = decision.record.received_at {
                if task.attempts_before_replay == 0 {
                    metrics.delivered_after_deadline(received - task.not_before);
                }
            }
            info!(log, "delivered"; "status" => status, "outcome" => "delivered");
        }
        (TransitionOutcome::Applied, Transition::RetryWait { available_at }) => {
            metrics.attempt(destination, AttemptOutcome::RetryWait);
            info!(log, "will retry"; "status" => status, "outcome" => "retry_wait",
                  "error" => decision.record.transport_error.as_deref(),
                  "retry_after" => decision.record.retry_after_raw.as_deref(),
                  "available_at" => %available_at);
        }
        (TransitionOutcome::Applied, Transition::Fail(reason)) => {
            metrics.attempt(destination, AttemptOutcome::Failed);
            metrics.failed(&reason.code());
            warn!(log, "failed"; "status" => status, "outcome" => "failed", "reason" => reason.code());
        }
        (TransitionOutcome::Fenced, _) => {
            metrics.attempt(destination, AttemptOutcome::Fenced);
            metrics.fenced(destination);
            warn!(log, "lease was lost before the finish; another consumer owns the task";
                  "status" => status, "outcome" => "fenced");
        }
        (TransitionOutcome::NotFound, _) => {
            warn!(log, "task vanished before the finish"; "outcome" => "not_found");
        }
        // Only a hand-back answers this; a finish never does.
        (TransitionOutcome::PastHorizon, _) => {}
    }
}
