//! What this process knows of each destination's pace: the limits its
//! throttle last took (the destination's own settings over the
//! configuration's). A destination's next throttle starts from them, and
//! the claimer takes no more of a destination's rows in one claim than
//! its rate sends within a stay (`claim_cap`), so a slow destination's
//! rows are not claimed only to be handed back.
//!
//! Only limits worth keeping are kept (`Shared::paces_keep`: a
//! destination's own, or any slow enough to cap a claim), while the
//! destination's throttle lives and for [`KEPT_AFTER`] once it is evicted:
//! memory follows the destinations in flight with such limits, not every
//! destination ever sent to. A destination's first claim in a process,
//! before its limits are known, takes the claim's share; what its rate
//! cannot send within the stay goes back, due when its turn comes.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::domain::DestinationId;

use crate::config::ThrottleLimits;

/// How long a destination's limits are kept once its throttle is evicted.
const KEPT_AFTER: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Default)]
pub struct Paces {
    inner: Rc<RefCell<HashMap<DestinationId, Pace>>>,
}

#[derive(Debug, Clone, Copy)]
struct Pace {
    limits: ThrottleLimits,
    /// Until when it is kept: `None` while its throttle lives.
    until: Option<Instant>,
}

impl Paces {
    /// The destination's throttle took `limits`; `keep` says whether they
    /// are worth keeping (else what was kept is dropped).
    pub fn took(&self, destination: &DestinationId, limits: ThrottleLimits, keep: bool) {
        let mut inner = self.inner.borrow_mut();
        if keep {
            inner.insert(
                destination.clone(),
                Pace {
                    limits,
                    until: None,
                },
            );
        } else {
            inner.remove(destination);
        }
    }

    /// A change of the destination's limits was heard while it has no
    /// throttle here: kept a while, for the claims and the next throttle.
    pub fn heard(&self, destination: &DestinationId, limits: ThrottleLimits, keep: bool) {
        self.took(destination, limits, keep);
        self.released(destination);
    }

    /// The destination's throttle is evicted: its limits are kept a while
    /// for the next one.
    pub fn released(&self, destination: &DestinationId) {
        if let Some(pace) = self.inner.borrow_mut().get_mut(destination) {
            pace.until = Some(Instant::now() + KEPT_AFTER);
        }
    }

    /// The destination's limits as last taken, if they are its own and
    /// still kept.
    pub fn limits(&self, destination: &DestinationId) -> Option<ThrottleLimits> {
        let inner = self.inner.borrow();
        let pace = inner.get(destination)?;
        pace.until
            .is_none_or(|until| until > Instant::now())
            .then_some(pace.limits)
    }

    /// The destinations whose rate sends fewer than `cap` rows within
    /// `stay`, each with the rows it does send then (at least one).
    pub fn caps(&self, stay: Duration, cap: u32) -> Vec<(DestinationId, u32)> {
        let now = Instant::now();
        let mut inner = self.inner.borrow_mut();
        inner.retain(|_, pace| pace.until.is_none_or(|until| until > now));
        inner
            .iter()
            .filter_map(|(id, pace)| {
                let rows = claim_cap(&pace.limits, stay, cap);
                (rows < cap).then(|| (id.clone(), rows))
            })
            .collect()
    }
}

/// The rows a destination paced by `limits` sends within `stay` (its rate
/// over the stay, rounded up), between one and `cap`.
pub fn claim_cap(limits: &ThrottleLimits, stay: Duration, cap: u32) -> u32 {
    let rows = (limits.rate_per_second * stay.as_secs_f64()).ceil();
    if rows.is_finite() && rows < f64::from(cap) {
        (rows as u32).max(1)
    } else {
        cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rate_per_second: f64) -> ThrottleLimits {
        ThrottleLimits {
            rate_per_second,
            burst: 20,
            max_in_flight: 8,
        }
    }

    #[test]
    fn a_claim_takes_what_the_rate_sends_within_a_stay() {
        let stay = Duration::from_secs(6);
        assert_eq!(claim_cap(&limits(1.0), stay, 64), 6);
        assert_eq!(claim_cap(&limits(2.5), stay, 64), 15);
        assert_eq!(claim_cap(&limits(0.001), stay, 64), 1, "at least one");
        assert_eq!(
            claim_cap(&limits(100_000.0), stay, 64),
            64,
            "never past the cap"
        );
    }

    #[test]
    fn only_limits_worth_keeping_are_kept_and_only_slow_ones_cap_a_claim() {
        let paces = Paces::default();
        let slow = DestinationId::new("slow").unwrap();
        let fast = DestinationId::new("fast").unwrap();
        let plain = DestinationId::new("plain").unwrap();
        paces.took(&slow, limits(1.0), true);
        paces.took(&fast, limits(100_000.0), true);
        paces.took(&plain, limits(20.0), false);
        assert_eq!(paces.limits(&slow), Some(limits(1.0)));
        assert_eq!(paces.limits(&plain), None, "the configuration's: not kept");
        assert_eq!(
            paces.caps(Duration::from_secs(6), 16),
            vec![(slow.clone(), 6)]
        );

        // Back to the configuration's: forgotten.
        paces.took(&slow, limits(20.0), false);
        assert_eq!(paces.limits(&slow), None);
        assert!(paces.caps(Duration::from_secs(6), 16).is_empty());
    }

    #[test]
    fn an_evicted_throttles_limits_are_kept_a_while() {
        let paces = Paces::default();
        let slow = DestinationId::new("slow").unwrap();
        paces.took(&slow, limits(1.0), true);
        paces.released(&slow);
        assert_eq!(paces.limits(&slow), Some(limits(1.0)));
        paces.inner.borrow_mut().get_mut(&slow).unwrap().until = Some(Instant::now());
        assert_eq!(paces.limits(&slow), None, "lapsed");
        assert!(paces.caps(Duration::from_secs(6), 16).is_empty());
        assert!(paces.inner.borrow().is_empty(), "swept");
    }
}
