//! The decision before a request, from facts alone: what was read and
//! what the consumer knows. It reads nothing and writes nothing.

use chrono::Duration;

use super::consumer::Facts;
use super::outcome::{Stop, REFUSED_HAND_BACK};
use crate::domain::{SendTarget, Task};
use crate::payload_crypto::PayloadCryptoError;
use crate::policy::{self, BeforeSend, Gate, RetryPolicy};
use crate::store::TransitionOutcome;

/// Why the checks said "not now".
#[derive(Debug)]
pub(super) enum NotNow {
    Unreadable(PayloadCryptoError),
    Refused(String),
    /// An operator's change reached the task before its request.
    Changed,
    /// `paused` when the destination's pause was the reason.
    Checks {
        pause_left: Option<Duration>,
    },
}

impl NotNow {
    /// What the stop was, once the store carried `gate` out.
    pub(super) fn stopped(self, gate: Gate, outcome: TransitionOutcome) -> Stop {
        match self {
            NotNow::Unreadable(error) => Stop::Unreadable {
                error,
                failed: matches!(gate, Gate::Fail(_)),
                outcome,
            },
            NotNow::Refused(why) => Stop::Refused { why, outcome },
            NotNow::Changed => Stop::Changed { outcome },
            NotNow::Checks { pause_left } => Stop::Checks {
                gate,
                pause_left,
                outcome,
            },
        }
    }
}

/// The decision before a request, from what was read and what the consumer
/// knows: `None` to send now, or the gate that says "not now" and why. A
/// refused URL goes back for [`REFUSED_HAND_BACK`] whatever else holds;
/// then the checks of [`policy::before_send`].
pub(super) fn judge(
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
                pause_left: seen.pause_left,
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::domain::{Destination, DestinationHealth, DestinationId, Region};

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
                settings: Box::default(),
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
            Some((Gate::HandBack { after }, NotNow::Checks { pause_left })) => {
                assert_eq!(after, Some(Duration::seconds(90)));
                assert_eq!(
                    pause_left,
                    Some(Duration::seconds(90)),
                    "the pause, to hold"
                );
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
            Some((Gate::HandBack { after: None }, NotNow::Checks { pause_left: None })) => {}
            other => panic!("expected a hand-back, got {other:?}"),
        }
    }
}
