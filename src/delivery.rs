//! The store-side steps of one delivery, generic over the store, so the
//! runtime and the simulation run the same code: [`prepare`] gets what a
//! request needs in the order the promises want (the payload, which the
//! claim usually brought along, then the destination's row right before the
//! request, or the consumer's trusted copy of it), runs the checks before a
//! request ([`policy::before_send`]) and, when they say "not now", applies
//! that to the store ([`apply`]). The request itself and the finish are
//! the caller's: the runtime sends over HTTP, the simulation answers from
//! its seeded receiver, and both commit the policy's decision with
//! [`Store::finish`].

use chrono::Duration;

use crate::domain::{AttemptRecord, ClaimedTask, DestinationId, Payload, SendTarget};
use crate::payload_crypto::PayloadCryptoError;
use crate::policy::{self, BeforeSend, Gate, RetryPolicy};
use crate::store::{Store, StoreError, TransitionOutcome};

/// How long a task whose payload this consumer cannot open is handed back
/// for, so a consumer with the right key can take it.
pub const UNREADABLE_HAND_BACK: Duration = Duration::minutes(1);

/// How long a task whose destination this consumer's address policy
/// refuses is handed back for: the destination waits, its tasks unsent
/// and not failed, until the policy lets it through (an allowlist restored
/// by a restart) or their horizon passes.
pub const REFUSED_HAND_BACK: Duration = Duration::minutes(1);

/// What a consumer knows that the store does not.
pub trait Consumer {
    /// Takes in the store's word on what is left of the destination's
    /// pause and returns what is left of the longest pause this consumer
    /// knows of for it (its own 429s count before their finish commits).
    fn pause_left(
        &self,
        destination: &DestinationId,
        store_says: Option<Duration>,
    ) -> Option<Duration>;

    /// What is left of its lease on the task, by its own reckoning.
    fn lease_left(&self) -> Duration;

    /// The destination as this consumer last read it, when it still trusts
    /// that reading (its pause aside: [`Consumer::pause_left`] is asked
    /// either way). `None` makes [`prepare`] read the row.
    fn known_target(&self, _destination: &DestinationId) -> Option<SendTarget> {
        None
    }

    /// Called with every row [`prepare`] read, so the consumer can keep it.
    fn read_target(&self, _target: &SendTarget) {}

    /// Why this consumer's address policy refuses the destination's URL,
    /// when it does. Asked before every request.
    fn refuses(&self, _target: &SendTarget) -> Option<String> {
        None
    }
}

/// What [`prepare`] found. Made once per send and moved once, so the
/// size of its ready variant costs nothing worth a box.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Prepared {
    /// Send it now: the opened payload and the destination as just read.
    Ready {
        payload: Payload,
        target: SendTarget,
    },
    /// Not now; the store already has the task back (or ended).
    Stopped(Stop),
}

/// Why a task was not sent, and what the store did with it.
#[derive(Debug)]
pub enum Stop {
    /// Another key sealed the payload: handed back for
    /// [`UNREADABLE_HAND_BACK`].
    Unreadable {
        error: PayloadCryptoError,
        outcome: TransitionOutcome,
    },
    /// The consumer's address policy refuses the destination's URL: handed
    /// back for [`REFUSED_HAND_BACK`].
    Refused {
        why: String,
        outcome: TransitionOutcome,
    },
    /// The checks before a request said no; `paused` when the
    /// destination's pause was the reason.
    Checks {
        gate: Gate,
        paused: bool,
        outcome: TransitionOutcome,
    },
}

/// What the reads and checks before a request decided, before anything
/// was written: a caller may try [`look`] again after a fault of the
/// database, but must carry out a "not now" ([`apply`]) once, with no look
/// after it, or a task handed back could still be sent.
#[derive(Debug)]
pub enum Look {
    Ready {
        payload: Payload,
        target: SendTarget,
    },
    NotNow {
        gate: Gate,
        why: NotNow,
    },
}

/// Why the checks said "not now".
#[derive(Debug)]
pub enum NotNow {
    Unreadable(PayloadCryptoError),
    Refused(String),
    /// `paused` when the destination's pause was the reason.
    Checks {
        paused: bool,
    },
}

impl NotNow {
    /// What the stop was, once the store carried `gate` out.
    pub fn stopped(self, gate: Gate, outcome: TransitionOutcome) -> Stop {
        match self {
            NotNow::Unreadable(error) => Stop::Unreadable { error, outcome },
            NotNow::Refused(why) => Stop::Refused { why, outcome },
            NotNow::Checks { paused } => Stop::Checks {
                gate,
                paused,
                outcome,
            },
        }
    }
}

/// Reads what the request needs and runs the checks before it; writes
/// nothing.
///
/// `lease_needed` is what a request needs of the lease: the send timeout
/// plus a margin for the finish.
pub async fn look<S: Store>(
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
        Err(StoreError::Payload(e)) => {
            return Ok(Look::NotNow {
                gate: Gate::HandBack {
                    after: Some(UNREADABLE_HAND_BACK),
                },
                why: NotNow::Unreadable(e),
            });
        }
        Err(e) => return Err(e),
    };
    // Read last, right before the request: the row is the authority on a
    // pause another consumer committed, unless the consumer hears of every
    // pause as it is committed and so can trust what it read before.
    let target = match consumer.known_target(&task.destination_id) {
        Some(known) => known,
        None => {
            let target = store
                .send_target(&task.destination_id)
                .await?
                .ok_or_else(|| StoreError::NotFound {
                    what: "destination",
                    id: task.destination_id.to_string(),
                })?;
            consumer.read_target(&target);
            target
        }
    };
    if let Some(why) = consumer.refuses(&target) {
        return Ok(Look::NotNow {
            gate: Gate::HandBack {
                after: Some(REFUSED_HAND_BACK),
            },
            why: NotNow::Refused(why),
        });
    }
    let seen = BeforeSend {
        task,
        disabled: !target.destination.enabled,
        pause_left: consumer.pause_left(&task.destination_id, target.pause_left),
        lease_left: consumer.lease_left(),
        lease_needed,
    };
    let gate = policy::before_send(&seen, policy);
    if gate != Gate::Send {
        let paused = seen.pause_left.is_some();
        return Ok(Look::NotNow {
            gate,
            why: NotNow::Checks { paused },
        });
    }
    Ok(Look::Ready { payload, target })
}

/// [`look`], then [`apply`] when it says "not now".
pub async fn prepare<S: Store>(
    store: &S,
    claimed: &ClaimedTask,
    policy: &RetryPolicy,
    lease_needed: Duration,
    consumer: &impl Consumer,
) -> Result<Prepared, StoreError> {
    match look(store, claimed, policy, lease_needed, consumer).await? {
        Look::Ready { payload, target } => Ok(Prepared::Ready { payload, target }),
        Look::NotNow { gate, why } => {
            let outcome = apply(store, claimed, &gate).await?;
            Ok(Prepared::Stopped(why.stopped(gate, outcome)))
        }
    }
}

/// Carries out a gate that says "not now": the task goes back unsent (not
/// counted; past its retry horizon the store fails it instead), or ends
/// unsent with the gate's reason.
pub async fn apply<S: Store>(
    store: &S,
    claimed: &ClaimedTask,
    gate: &Gate,
) -> Result<TransitionOutcome, StoreError> {
    let lease = claimed.lease();
    match gate {
        Gate::Send => Ok(TransitionOutcome::Applied),
        Gate::HandBack { after } => store.release(&lease, *after).await,
        Gate::Fail(reason) => store.fail(&lease, reason, &AttemptRecord::default()).await,
    }
}
