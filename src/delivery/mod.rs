//! The store-side steps of one delivery before its request, generic over
//! the store, so the runtime and the simulation run the same code:
//! [`before_request`] gets what a request needs in the order the promises
//! want (the payload, which the claim usually brought along, then the
//! destination's row right before the request, or the consumer's trusted
//! copy of it), runs the checks before a request ([`policy::before_send`])
//! and, when they say "not now", carries that out in the store. A store
//! call that fails for a moment (a restart, a failover, a dropped
//! connection) is tried again while the lease has time for it, waiting
//! [`RETRY_FIRST`], doubling, at most [`RETRY_LONGEST`], on the consumer's
//! clock ([`Consumer::wait`]): real time in the runtime, the simulation's
//! fake clock there. The request itself and the finish are the caller's:
//! the runtime sends over HTTP, the simulation answers from its seeded
//! receiver, and both commit the policy's decision with [`Leases::finish`];
//! a request the address policy stops at the exchange goes back through
//! [`carry_out`], as every "not now" does.
//!
//! # Layout
//! - `mod.rs`: [`before_request`] and [`carry_out`], with their retries
//!   through a short fault of the store;
//! - `consumer`: what the caller brings, [`Consumer`] and [`Facts`];
//! - `judge`: the decision before a request, from facts alone.
//! - `outcome`: what the steps answer, a task ready to send or why it
//!   stopped, and how long a stopped one is handed back for.

use std::future::Future;

use chrono::Duration;

use crate::domain::{AttemptRecord, ClaimedTask, FailureReason, Payload, SendTarget, Task};
use crate::payload_crypto::PayloadCryptoError;
use crate::policy::{Gate, RetryPolicy};
use crate::store::{Store, StoreError, TransitionOutcome};

mod consumer;
mod judge;
mod outcome;

pub use consumer::{Consumer, Facts};
use judge::{judge, NotNow};
pub use outcome::{Prepared, Stop, REFUSED_HAND_BACK, UNREADABLE_HAND_BACK};

/// The first wait before a store call that failed for a moment is tried
/// again; each wait doubles up to [`RETRY_LONGEST`].
pub const RETRY_FIRST: std::time::Duration = std::time::Duration::from_millis(50);

/// The longest wait between two tries: a database that is back is found
/// within about this long.
pub const RETRY_LONGEST: std::time::Duration = std::time::Duration::from_millis(500);

/// The wait after `wait`.
pub fn next_retry(wait: std::time::Duration) -> std::time::Duration {
    wait.saturating_mul(2).min(RETRY_LONGEST)
}

/// Gets a claimed task ready for its request, or carries out why not:
/// reads what the request needs and runs the checks before it (`look`),
/// tried again through a short fault of the store while a request would
/// still fit in the lease, then, when the checks say "not now", carries
/// that out once (`carry_out`) and never looks again, so a task handed
/// back is never sent.
///
/// `lease_needed` is what a request needs of the lease: the send timeout
/// plus a margin for the finish. An error is the store's, after the tries
/// the lease had time for: nothing was sent, and whether a hand-back the
/// checks asked for was written is unknown (the lease guard makes one more
/// harmless).
pub async fn before_request<S: Store>(
    store: &S,
    claimed: &ClaimedTask,
    policy: &RetryPolicy,
    lease_needed: Duration,
    consumer: &impl Consumer,
) -> Result<Prepared, StoreError> {
    // The look writes nothing, so trying it again cannot send a task that
    // an earlier try handed back.
    let looked = retried(consumer, "look", lease_needed, || {
        look(store, claimed, policy, lease_needed, consumer)
    })
    .await?;
    match looked {
        Look::Ready {
            payload,
            target,
            read,
        } => Ok(Prepared::Ready {
            payload,
            target,
            read,
        }),
        Look::NotNow { gate, why } => {
            let outcome = carry_out(store, claimed, &gate, consumer).await?;
            Ok(Prepared::Stopped(why.stopped(gate, outcome)))
        }
    }
}

/// What the reads and checks before a request decided, before anything
/// was written.
#[derive(Debug)]
enum Look {
    Ready {
        payload: Payload,
        target: SendTarget,
        read: bool,
    },
    NotNow {
        gate: Gate,
        why: NotNow,
    },
}

/// Calls `call` until it succeeds, until its error is not a short fault of
/// the store, or until the next try would not leave `keep` of the lease.
async fn retried<T, F, Fut>(
    consumer: &impl Consumer,
    what: &'static str,
    keep: Duration,
    mut call: F,
) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    let mut wait = RETRY_FIRST;
    loop {
        match call().await {
            Ok(done) => return Ok(done),
            Err(e) if e.is_transient() && consumer.lease_left() - keep > chrono_of(wait) => {
                consumer.wait(what, &e, wait).await;
                wait = next_retry(wait);
            }
            Err(e) => return Err(e),
        }
    }
}

fn chrono_of(wait: std::time::Duration) -> Duration {
    Duration::from_std(wait).unwrap_or(Duration::MAX)
}

/// Carries out a gate that says "not now", retried through a short fault
/// of the store while the lease lasts: the task goes back unsent (not
/// counted; past its retry horizon the store fails it instead), or ends
/// unsent with the gate's reason. A try whose answer was lost may have
/// committed; the next is then refused by the lease guard and changes
/// nothing.
pub async fn carry_out<S: Store>(
    store: &S,
    claimed: &ClaimedTask,
    gate: &Gate,
    consumer: &impl Consumer,
) -> Result<TransitionOutcome, StoreError> {
    let what = match gate {
        Gate::Fail(_) => "fail",
        _ => "hand back",
    };
    retried(consumer, what, Duration::zero(), || {
        apply(store, claimed, gate)
    })
    .await
}

/// Reads what the request needs and runs the checks before it; writes
/// nothing.
async fn look<S: Store>(
    store: &S,
    claimed: &ClaimedTask,
    policy: &RetryPolicy,
    lease_needed: Duration,
    consumer: &impl Consumer,
) -> Result<Look, StoreError> {
    let task = &claimed.task;
    let read = match &claimed.payload {
        Some(payload) => Ok(payload.clone()),
        None => store.payload(task).await,
    };
    let payload = match read {
        Ok(payload) => payload,
        // Erased since the claim: the cancel that came with the erasure
        // settles it. Back after a while, not at once, so a row erased by
        // other means is not claimed again and again meanwhile.
        Err(StoreError::Erased { .. }) => {
            return Ok(Look::NotNow {
                gate: Gate::HandBack {
                    after: Some(UNREADABLE_HAND_BACK),
                },
                why: NotNow::Changed,
            });
        }
        Err(StoreError::Payload(e)) => {
            return Ok(Look::NotNow {
                gate: unreadable_gate(task, &e),
                why: NotNow::Unreadable(e),
            });
        }
        Err(e) => return Err(e),
    };
    // Read last, right before the request: the row is the authority on a
    // pause another consumer committed, unless the consumer hears of every
    // pause as it is committed and so can trust what it read before.
    let (target, read) = match consumer.known_target(&task.destination_id).await {
        Some(known) => (known, false),
        None => {
            let target = store
                .send_target(&task.destination_id)
                .await?
                .ok_or_else(|| StoreError::NotFound {
                    what: "destination",
                    id: task.destination_id.to_string(),
                })?;
            (target, true)
        }
    };
    if consumer.change_pending(task.id) {
        return Ok(changed());
    }
    let facts = consumer.facts(&target);
    Ok(match judge(task, &target, &facts, policy, lease_needed) {
        None => Look::Ready {
            payload,
            target,
            read,
        },
        Some((gate, why)) => Look::NotNow { gate, why },
    })
}

/// A change an operator made reached the task: back unsent, at once (the
/// change waits on this lease, and the settle applies it once it is back).
fn changed() -> Look {
    Look::NotNow {
        gate: Gate::HandBack { after: None },
        why: NotNow::Changed,
    }
}

/// What becomes of a task whose payload did not open. Sealed under another
/// process's key (a rotation under way), it is handed back for a while, for
/// a process with that key, whatever its horizon. When no key opens it (its
/// bytes altered, or its key held by no process), waiting cannot help: it
/// is handed back no later than its horizon, and then fails
/// `payload_unreadable` (unsent, so the task's line moves on and a
/// `task.failed` event says why). The horizon is read against the store's
/// clock at the claim (`updated_at`, which the claim set), not this
/// process's.
pub fn unreadable_gate(task: &Task, error: &PayloadCryptoError) -> Gate {
    if error.another_process_may_open() {
        return Gate::HandBack {
            after: Some(UNREADABLE_HAND_BACK),
        };
    }
    let left = task.retry_horizon_at - task.updated_at;
    if left <= Duration::zero() {
        return Gate::Fail(FailureReason::PayloadUnreadable);
    }
    Gate::HandBack {
        after: Some(left.min(UNREADABLE_HAND_BACK)),
    }
}

/// Carries out a gate that says "not now", once.
async fn apply<S: Store>(
    store: &S,
    claimed: &ClaimedTask,
    gate: &Gate,
) -> Result<TransitionOutcome, StoreError> {
    let lease = claimed.lease();
    match gate {
        Gate::Send => Ok(TransitionOutcome::Applied),
        Gate::HandBack { after } => store.hand_back(&lease, *after).await,
        Gate::Fail(reason) => store.fail(&lease, reason, &AttemptRecord::default()).await,
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn claimed_at(horizon_left: Duration) -> Task {
        let now = chrono::Utc
            .with_ymd_and_hms(2026, 8, 13, 9, 0, 0)
            .single()
            .unwrap_or_default();
        let mut task = Task::leased_for_tests(now, Duration::seconds(30), Duration::hours(1), 1);
        task.updated_at = now;
        task.retry_horizon_at = now + horizon_left;
        task
    }

    #[test]
    fn another_processs_key_waits_for_it_and_no_key_waits_for_the_horizon_only() {
        let wrong = PayloadCryptoError::WrongKey {
            stored: "aa".into(),
            configured: "bb".into(),
        };
        let hand_back = |minutes: i64| Gate::HandBack {
            after: Some(Duration::minutes(minutes)),
        };
        // Another process's key: back for a minute, horizon or not.
        assert_eq!(
            unreadable_gate(&claimed_at(Duration::hours(-1)), &wrong),
            hand_back(1)
        );
        for unreadable in [
            PayloadCryptoError::Tampered,
            PayloadCryptoError::UnknownKey {
                stored: "aa".into(),
                configured: "bb".into(),
            },
        ] {
            let gate = |left| unreadable_gate(&claimed_at(left), &unreadable);
            assert_eq!(gate(Duration::hours(2)), hand_back(1));
            assert_eq!(
                gate(Duration::seconds(20)),
                Gate::HandBack {
                    after: Some(Duration::seconds(20))
                },
                "never past the horizon"
            );
            assert_eq!(
                gate(Duration::zero()),
                Gate::Fail(FailureReason::PayloadUnreadable)
            );
            assert_eq!(
                gate(Duration::hours(-3)),
                Gate::Fail(FailureReason::PayloadUnreadable)
            );
        }
    }
}
