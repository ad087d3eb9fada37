//! Local backoff: exponential ceiling with full jitter.
//!
//! Jitter spreads retries of many tasks that failed together. It applies only
//! to delays remit computes itself, never to a receiver's Retry-After.

use chrono::Duration;
use rand::Rng;

/// A delay drawn uniformly from `[0, min(cap, base * 2^(attempt-1))]`.
/// `attempt` counts from 1 (the attempt that just failed).
pub fn full_jitter_backoff(
    attempt: u32,
    base: Duration,
    cap: Duration,
    rng: &mut impl Rng,
) -> Duration {
    let base_ms = base.num_milliseconds().max(1);
    let cap_ms = cap.num_milliseconds().max(base_ms);
    let doublings = attempt.saturating_sub(1).min(62);
    let ceiling = base_ms.saturating_mul(1_i64 << doublings).min(cap_ms);
    Duration::milliseconds(rng.random_range(0..=ceiling))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn stays_within_the_growing_ceiling_and_the_cap() {
        let mut rng = StdRng::seed_from_u64(7);
        let (base, cap) = (Duration::seconds(1), Duration::seconds(60));
        for attempt in 1..80 {
            let ceiling = (1_i64 << (attempt - 1).min(20)).min(60);
            let d = full_jitter_backoff(attempt, base, cap, &mut rng);
            assert!(
                d >= Duration::zero() && d <= Duration::seconds(ceiling),
                "attempt {attempt}: {d}"
            );
        }
    }

    #[test]
    fn spreads_delays() {
        let mut rng = StdRng::seed_from_u64(1);
        let draws: std::collections::HashSet<_> = (0..50)
            .map(|_| full_jitter_backoff(6, Duration::seconds(1), Duration::seconds(60), &mut rng))
            .collect();
        assert!(draws.len() > 40);
    }
}
