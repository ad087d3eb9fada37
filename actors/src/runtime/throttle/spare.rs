//! Tokens a throttle took from its destination's bucket and had not spent
//! when it was evicted (a task went back unsent, or the destination was
//! paused after the take). The database already counted them as taken, so
//! they are kept here, each by its number, for the destination's next
//! throttle rather than taken twice.
//!
//! A token is kept only as long as the bucket would take to refill it
//! (`burst / rate`, within bounds): past that the bucket has it back to
//! give anyway, and keeping every destination's last token would make
//! memory grow with destinations known, not destinations in flight.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use remit::domain::DestinationId;

use crate::config::ThrottleLimits;

/// The shortest and longest time a spare token is kept.
const KEPT_AT_LEAST: Duration = Duration::from_secs(1);
const KEPT_AT_MOST: Duration = Duration::from_secs(60);

/// Entries below this are never swept: a sweep per deposit would cost
/// more than the memory it frees.
const SWEEP_FROM: usize = 1024;

#[derive(Debug, Clone, Default)]
pub struct SpareTokens {
    inner: Rc<RefCell<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Tokens (by number) and until when they are kept.
    kept: HashMap<DestinationId, (Vec<u64>, Instant)>,
    /// The size at which the next deposit sweeps out lapsed entries.
    sweep_at: usize,
}

impl SpareTokens {
    /// Keeps `tokens` (their numbers) for the destination's next throttle.
    pub fn deposit(&self, destination: &DestinationId, tokens: Vec<u64>, limits: &ThrottleLimits) {
        if tokens.is_empty() {
            return;
        }
        let now = Instant::now();
        let until = now + refill_time(limits);
        let mut inner = self.inner.borrow_mut();
        let entry = inner
            .kept
            .entry(destination.clone())
            .or_insert((Vec::new(), until));
        entry.0.extend(tokens);
        entry.1 = entry.1.max(until);
        if inner.kept.len() >= inner.sweep_at.max(SWEEP_FROM) {
            inner.kept.retain(|_, (_, until)| *until > now);
            inner.sweep_at = inner.kept.len().saturating_mul(2);
        }
    }

    /// The destination's spare tokens, if any are still good; they are
    /// the caller's from now on.
    pub fn withdraw(&self, destination: &DestinationId) -> Vec<u64> {
        let mut inner = self.inner.borrow_mut();
        match inner.kept.remove(destination) {
            Some((tokens, until)) if until > Instant::now() => tokens,
            _ => Vec::new(),
        }
    }

    /// Destinations with spare tokens kept (lapsed ones not yet swept
    /// included).
    pub fn len(&self) -> usize {
        self.inner.borrow().kept.len()
    }
}

/// How long an empty bucket takes to fill up again.
fn refill_time(limits: &ThrottleLimits) -> Duration {
    let seconds = f64::from(limits.burst) / limits.rate_per_second;
    Duration::try_from_secs_f64(seconds)
        .unwrap_or(KEPT_AT_MOST)
        .clamp(KEPT_AT_LEAST, KEPT_AT_MOST)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rate_per_second: f64, burst: u32) -> ThrottleLimits {
        ThrottleLimits {
            rate_per_second,
            burst,
            max_in_flight: 4,
        }
    }

    #[test]
    fn tokens_pass_to_the_next_taker_once() {
        let spare = SpareTokens::default();
        let crm = DestinationId::new("crm").unwrap();
        spare.deposit(&crm, Vec::new(), &limits(5.0, 5));
        assert_eq!(spare.len(), 0, "nothing to keep");
        spare.deposit(&crm, vec![7, 8], &limits(5.0, 5));
        spare.deposit(&crm, vec![11], &limits(5.0, 5));
        assert_eq!(spare.withdraw(&crm), vec![7, 8, 11]);
        assert!(spare.withdraw(&crm).is_empty(), "taken already");
        assert_eq!(spare.len(), 0);
    }

    #[test]
    fn kept_about_as_long_as_the_bucket_takes_to_refill() {
        assert_eq!(refill_time(&limits(5.0, 10)), Duration::from_secs(2));
        assert_eq!(refill_time(&limits(1_000_000.0, 5)), KEPT_AT_LEAST);
        assert_eq!(refill_time(&limits(0.001, 5)), KEPT_AT_MOST);
    }
}
