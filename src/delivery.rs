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
//! receiver, and both commit the policy's decision with [`Store::finish`];
//! a request the address policy stops at the exchange goes back through
//! [`carry_out`], as every "not now" does.

use std::future::Future;

use chrono::Duration;

use crate::domain::{AttemptRecord, ClaimedTask, DestinationId, Payload, SendTarget, Task};
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

/// What a consumer knows of a task's destination right before its
/// request, beside the row itself: the facts the decision before a request
/// takes ([`judge`]), so that decision reads nothing and asks nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// Why the consumer's address policy refuses the destination's URL,
    /// when it does.
    pub refused: Option<String>,
    /// What is left of the longest pause the consumer knows of for the
    /// destination, the row's included (its own 429s count before their
    /// finish commits).
    pub pause_left: Option<Duration>,
    /// What is left of its lease on the task, by its own clock.
    pub lease_left: Duration,
}

/// What a consumer knows that the store does not, and its clock.
pub trait Consumer {
    /// What it knows of `target`'s destination right now, the row (or its
    /// trusted copy) just read; the row's pause is among what it takes in.
    fn facts(&self, target: &SendTarget) -> Facts;

    /// What is left of its lease on the task, by its own clock: how long a
    /// store call may still be tried again.
    fn lease_left(&self) -> Duration;

    /// Waits `wait` on the same clock before a store call that failed with
    /// `error` is tried again (`call` names it, for a log).
    fn wait(
        &self,
        call: &'static str,
        error: &StoreError,
        wait: std::time::Duration,
    ) -> impl Future<Output = ()>;

    /// The destination as this consumer last read it, when it still trusts
    /// that reading, or as it reads it right now with other requests' reads
    /// (its pause aside: [`Consumer::facts`] takes the row's pause in
    /// either way). Asked at every try; `None` makes [`before_request`]
    /// read the row.
    fn known_target(
        &self,
        _destination: &DestinationId,
    ) -> impl Future<Output = Option<SendTarget>> {
        std::future::ready(None)
    }

    /// Called with every row [`before_request`] read, so the consumer can
    /// keep it.
    fn read_target(&self, _target: &SendTarget) {}
}

/// What [`before_request`] found. Made once per send and moved once, so
/// the size of its ready variant costs nothing worth a box.
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
        Look::Ready { payload, target } => Ok(Prepared::Ready { payload, target }),
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
    },
    NotNow {
        gate: Gate,
        why: NotNow,
    },
}

/// Why the checks said "not now".
#[derive(Debug)]
enum NotNow {
    Unreadable(PayloadCryptoError),
    Refused(String),
    /// `paused` when the destination's pause was the reason.
    Checks {
        paused: bool,
    },
}

impl NotNow {
    /// What the stop was, once the store carried `gate` out.
    fn stopped(self, gate: Gate, outcome: TransitionOutcome) -> Stop {
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
    let target = match consumer.known_target(&task.destination_id).await {
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
    let facts = consumer.facts(&target);
    Ok(match judge(task, &target, &facts, policy, lease_needed) {
        None => Look::Ready { payload, target },
        Some((gate, why)) => Look::NotNow { gate, why },
    })
}

/// The decision before a request, from what was read and what the consumer
/// knows: `None` to send now, or the gate that says "not now" and why. A
/// refused URL goes back for [`REFUSED_HAND_BACK`] whatever else holds;
/// then the checks of [`policy::before_send`].
fn judge(
    task: &Task,
    target: &SendTarget,
    facts: &Facts,
    policy: &RetryPolicy,
    lease_needed: Duration,
) -> Option<(Gate, NotNow)> {
    if let Some(why) = &facts.refused {
        let gate = Gate::HandBack {
            after: Some(REFUSED_HAND_BACK),
        };
        return Some((gate, NotNow::Refused(why.clone())));
    }
    let seen = BeforeSend {
        task,
        disabled: !target.destination.enabled,
        pause_left: facts.pause_left,
        lease_left: facts.lease_left,
        lease_needed,
    };
    match policy::before_send(&seen, policy) {
        Gate::Send => None,
        gate => Some((
            gate,
            NotNow::Checks {
                paused: seen.pause_left.is_some(),
            },
        )),
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
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::domain::{Destination, DestinationHealth, Region};

    fn task() -> Task {
        let now = Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap();
        Task::leased_for_tests(now, Duration::seconds(30), Duration::hours(1), 1)
    }

    fn target(enabled: bool) -> SendTarget {
        SendTarget {
            destination: Destination {
                id: DestinationId::new("crm").unwrap(),
                region: Region::EU,
                url: "https://hooks.example.com/in".parse().unwrap(),
                has_signing_secret: false,
                enabled,
                paused_until: None,
                health: Box::new(DestinationHealth::default()),
            },
            signing_secrets: Vec::new(),
            pause_left: None,
        }
    }

    fn facts(refused: Option<&str>, pause_left: Option<Duration>, lease_left: i64) -> Facts {
        Facts {
            refused: refused.map(str::to_owned),
            pause_left,
            lease_left: Duration::seconds(lease_left),
        }
    }

    const NEEDED: Duration = Duration::seconds(10);

    #[test]
    fn a_task_goes_when_nothing_holds_it() {
        let judged = judge(
            &task(),
            &target(true),
            &facts(None, None, 30),
            &RetryPolicy::default(),
            NEEDED,
        );
        assert!(judged.is_none(), "{judged:?}");
    }

    #[test]
    fn a_refused_url_goes_back_for_its_hold_whatever_else_holds() {
        let paused = facts(Some("private address"), Some(Duration::minutes(5)), 1);
        match judge(
            &task(),
            &target(false),
            &paused,
            &RetryPolicy::default(),
            NEEDED,
        ) {
            Some((Gate::HandBack { after }, NotNow::Refused(why))) => {
                assert_eq!(after, Some(REFUSED_HAND_BACK));
                assert_eq!(why, "private address");
            }
            other => panic!("expected the refusal's hand-back, got {other:?}"),
        }
    }

    #[test]
    fn a_pause_the_consumer_knows_holds_the_task_until_it_ends() {
        let paused = facts(None, Some(Duration::seconds(90)), 30);
        match judge(
            &task(),
            &target(true),
            &paused,
            &RetryPolicy::default(),
            NEEDED,
        ) {
            Some((Gate::HandBack { after }, NotNow::Checks { paused })) => {
                assert_eq!(after, Some(Duration::seconds(90)));
                assert!(paused);
            }
            other => panic!("expected a hand-back until the pause ends, got {other:?}"),
        }
    }

    #[test]
    fn a_lease_too_short_for_the_request_hands_the_task_back() {
        let short = facts(None, None, 5);
        match judge(
            &task(),
            &target(true),
            &short,
            &RetryPolicy::default(),
            NEEDED,
        ) {
            Some((Gate::HandBack { after: None }, NotNow::Checks { paused: false })) => {}
            other => panic!("expected a hand-back, got {other:?}"),
        }
    }
}
