//! One task's delivery, from the claim to the committed next state: what
//! the request needs and the checks before it, retried through a short
//! fault of the database ([`delivery::before_request`], the same code the
//! simulation runs), the request under one deadline, the policy, and the
//! finish (`commit`: retried and kept alive by a lease heartbeat until it
//! commits or the lease is gone); how it ended is counted in `delivered`.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use chrono::{DateTime, Utc};

use remit::delivery::{self, Prepared, Stop};
use remit::domain::{ClaimedTask, DestinationId, Payload, SendTarget, Task};
use remit::policy::{decide, read_quota, Gate, Observed, QuotaFields, TransportError};
use remit::store::{QuotaNote, StoreError};
use slog::{debug, warn};

use super::super::finish::commit;
use super::super::shared::batcher::BatchError;
use super::super::shared::failpoint::{self, Injected};
use super::super::shared::messages::Delivered;
use super::super::shared::Shared;
use super::consumer::{chrono_saturating, hold_refused, RuntimeConsumer};
use super::delivered::{report, stopped};
use super::transport;
use super::under_way::UnderWay;
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
/// `token`, in three stages: ready it (`prepare`: the reads and checks
/// before a request, or the task back unsent), send it (`exchange`), and
/// commit what the policy decides of the answer (`settle`). `sent` is set
/// just before the request goes out: from then on the receiver may have
/// it. The request's in-flight places (`under_way`) go back once the
/// exchange is over.
pub(super) async fn deliver(
    shared: Shared,
    client: awc::Client,
    claimed: ClaimedTask,
    claimed_at: Instant,
    (token, under_way): (u64, UnderWay),
    sent: Rc<Cell<bool>>,
) -> Result<Delivered, DeliveryFailure> {
    let task = &claimed.task;
    let mut span = AttemptSpan::start(&shared.telemetry, task);
    let log = attempt_log(&shared, task, &span);
    let lease_ends = Rc::new(Cell::new(claimed_at + shared.lease()));
    let consumer = RuntimeConsumer {
        shared: &shared,
        lease_ends: &lease_ends,
        log: &log,
    };

    let prepared = prepare(&shared, &claimed, &consumer).await;
    // What the look learned, applied now that it has answered: a change
    // it was told of is dealt with (the task went back, or a change heard
    // since waits for this attempt, as it would for one already sent).
    shared.changed.forget(task.id);
    let (payload, target) = match prepared? {
        Prepared::Ready {
            payload,
            target,
            read,
        } => {
            if read {
                shared.targets.keep(&target);
            }
            (payload, target)
        }
        Prepared::Stopped(stop) => {
            // The task is back already; the hold keeps this process's other
            // tasks of the destination from being looked at meanwhile.
            match &stop {
                Stop::Refused { why, .. } => {
                    hold_refused(&shared, &task.destination_id, why, &log).await;
                }
                Stop::Checks {
                    pause_left: Some(left),
                    ..
                } => {
                    if let Ok(left) = left.to_std() {
                        shared.pauses.hold(&task.destination_id, left);
                    }
                }
                _ => {}
            }
            return Ok(ended_unsent(&shared, &stop, task, &mut span, &log));
        }
    };

    failpoint::hit(failpoint::BEFORE_SEND)?;
    sent.set(true);
    // When the request goes out, on the store's clock: the claim's now
    // (which it wrote as the row's `updated_at`) and the time since, on
    // this process's monotonic clock.
    let sent_at = task.updated_at + chrono_saturating(claimed_at.elapsed());
    let exchanged = exchange(
        &shared,
        &client,
        (&claimed, token, sent_at),
        (&payload, &target),
        &mut span,
        &log,
    )
    .await;
    failpoint::hit(failpoint::AFTER_RESPONSE)?;
    if exchanged.response == Err(TransportError::BlockedAddress) {
        // The host resolved only to addresses the policy refuses: nothing
        // was sent, so the task goes back as it came, as a refused URL's
        // does (the same hand-back, the same count), and no attempt is
        // counted even if this hand-back fails.
        sent.set(false);
        let why = "its host resolves only to addresses the address policy refuses";
        hold_refused(&shared, &task.destination_id, why, &log).await;
        let gate = Gate::HandBack {
            after: Some(delivery::REFUSED_HAND_BACK),
        };
        let outcome = delivery::carry_out(&shared.store, &claimed, &gate, &consumer)
            .await
            .map_err(DeliveryFailure::Store)?;
        let stop = Stop::Refused {
            why: why.to_owned(),
            outcome,
        };
        return Ok(ended_unsent(&shared, &stop, task, &mut span, &log));
    }

    settle(
        &shared,
        (&claimed, &target),
        claimed_at,
        exchanged,
        (&lease_ends, &under_way),
        &mut span,
        &log,
    )
    .await?;
    failpoint::hit(failpoint::AFTER_FINISH)?;
    Ok(Delivered::Finished)
}

/// The attempt's logger: the task, its destination and its attempt, and
/// the trace when there is one.
fn attempt_log(shared: &Shared, task: &Task, span: &AttemptSpan) -> slog::Logger {
    let log = shared.log.new(slog::o!(
        "task" => task.id.to_string(), "destination" => task.destination_id.to_string(),
        // The region's logger already carries the lease owner.
        "attempt" => task.attempt_count));
    match span.trace_id() {
        Some(trace_id) => log.new(slog::o!("trace_id" => trace_id.to_owned())),
        None => log,
    }
}

/// The reads and checks before the request, tried again through a short
/// fault of the database, or the task back unsent
/// ([`delivery::before_request`], the same code the simulation runs).
async fn prepare(
    shared: &Shared,
    claimed: &ClaimedTask,
    consumer: &RuntimeConsumer<'_>,
) -> Result<Prepared, DeliveryFailure> {
    let needed = chrono_saturating(shared.send_timeout() + shared.finish_margin());
    delivery::before_request(&shared.store, claimed, &shared.policy, needed, consumer)
        .await
        .map_err(|e| match e {
            StoreError::NotFound {
                what: "destination",
                id,
            } => DeliveryFailure::NoDestination(id),
            e => DeliveryFailure::Store(e),
        })
}

/// A task that ended unsent, counted, logged and traced; the store has it.
fn ended_unsent(
    shared: &Shared,
    stop: &Stop,
    task: &Task,
    span: &mut AttemptSpan,
    log: &slog::Logger,
) -> Delivered {
    let delivered = stopped(shared, stop, task, log);
    span.unsent(match delivered {
        Delivered::Finished => "failed",
        Delivered::HandedBack => "handed_back",
    });
    delivered
}

/// What came back from the request, with the times the policy reads.
struct Exchanged {
    response: Result<(u16, Option<String>), TransportError>,
    server_date: Option<chrono::DateTime<chrono::Utc>>,
    started_at: chrono::DateTime<chrono::Utc>,
    received_at: chrono::DateTime<chrono::Utc>,
    /// `received_at` on the monotonic clock.
    received: Instant,
}

/// The request, signed with every secret valid now, under one deadline;
/// what the receiver announced of its quota is learned on the way back.
async fn exchange(
    shared: &Shared,
    client: &awc::Client,
    (claimed, token, sent_at): (&ClaimedTask, u64, chrono::DateTime<chrono::Utc>),
    (payload, target): (&Payload, &SendTarget),
    span: &mut AttemptSpan,
    log: &slog::Logger,
) -> Exchanged {
    let task = &claimed.task;
    // A stored secret was validated when it was added.
    let keys: Vec<Vec<u8>> = target
        .secrets_at(shared.wall.now())
        .filter_map(|s| signature::secret_key(s).ok())
        .collect();
    let started_at = shared.wall.now();
    let webhook = transport::Webhook {
        url: &target.destination.url,
        task,
        payload,
        signing_keys: &keys,
        traceparent: span.traceparent(),
        headers: &target.destination.settings.headers,
    };
    let limits = (
        shared.send_timeout_for(target),
        shared.config.send.max_response_bytes,
    );
    let (response, server_date, quota) =
        transport::exchange(client, &shared.egress, webhook, limits).await;
    let received_at = shared.wall.now();
    let received = Instant::now();
    span.response(&response);
    learn_quota(
        shared,
        (&task.destination_id, token, sent_at),
        &quota,
        (received_at, server_date),
        log,
    );
    Exchanged {
        response,
        server_date,
        started_at,
        received_at,
        received,
    }
}

/// What the policy decides of the answer, held here at once when it
/// pauses the destination, then committed ([`commit::finish`]), counted
/// and traced. The request's in-flight places go back between the two:
/// after the pause (so nothing of the destination starts inside it),
/// before the commit (which may wait for a batch).
async fn settle(
    shared: &Shared,
    (claimed, target): (&ClaimedTask, &SendTarget),
    claimed_at: Instant,
    exchanged: Exchanged,
    (lease_ends, under_way): (&Rc<Cell<Instant>>, &UnderWay),
    span: &mut AttemptSpan,
    log: &slog::Logger,
) -> Result<(), DeliveryFailure> {
    let task = &claimed.task;
    // The horizon as this process's clock sees it, like the times below.
    let lease_length = chrono_saturating(shared.lease());
    let claimed_wall = shared.wall.now() - chrono_saturating(claimed_at.elapsed());
    let observed = Observed {
        attempt: task.attempts_since_replay().max(1),
        retry_horizon_at: claimed.retry_horizon_seen_at(lease_length, claimed_wall),
        started_at: exchanged.started_at,
        received_at: exchanged.received_at,
        server_date: exchanged.server_date,
        response: exchanged.response,
    };
    let decision = decide(&observed, &shared.policy_for(target), &mut rand::rng());
    let received = exchanged.received;
    if let Some(until) = decision.pause_destination_until {
        // Known to this process from now on, before the finish commits:
        // nothing of this destination starts here until it ends.
        let left = (until - exchanged.received_at).to_std().unwrap_or_default();
        shared.stats.metrics.paused(&task.destination_id);
        shared.pauses.hold(
            &task.destination_id,
            left.saturating_sub(received.elapsed()),
        );
    }
    under_way.over();
    let lease = claimed.lease();
    let outcome = commit::finish(
        shared,
        &task.destination_id,
        &lease,
        &decision,
        lease_ends,
        log,
    )
    .await
    .map_err(|source| DeliveryFailure::Unrecorded {
        source,
        pause: decision
            .pause_delay()
            .and_then(|d| d.to_std().ok())
            .and_then(|d| received.checked_add(d)),
    })?;
    report(shared, log, task, outcome, &decision);
    span.finished(outcome, &decision);
    Ok(())
}

/// Reads what one response announced, logs what had to be clamped or
/// could not be read, and hands the quota to be written without waiting
/// for it, with the number of the token its request went out with (which
/// places it among the destination's requests).
fn learn_quota(
    shared: &Shared,
    (destination, token, sent_at): (&DestinationId, u64, DateTime<Utc>),
    fields: &QuotaFields,
    received: (DateTime<Utc>, Option<DateTime<Utc>>),
    log: &slog::Logger,
) {
    if fields.is_empty() {
        return;
    }
    let (received_at, server_date) = received;
    let announced = read_quota(
        fields,
        received_at,
        server_date,
        shared.policy.max_server_delay,
    );
    for problem in &announced.problems {
        warn!(log, "the receiver's rate-limit fields were clamped or ignored"; "problem" => problem);
    }
    let Some(quota) = announced.quota else {
        return;
    };
    shared
        .stats
        .metrics
        .quota_announced(destination, quota.remaining);
    let note = QuotaNote {
        destination: destination.clone(),
        quota,
        token,
        sent_at,
    };
    let quotas = shared.quotas.clone();
    let log = log.clone();
    actix_rt::spawn(async move {
        if let Err(e) = quotas.call(note).await {
            debug!(log, "could not record the receiver's quota; the next response will";
                   "error" => %remit::error_chain(&e));
        }
    });
}
