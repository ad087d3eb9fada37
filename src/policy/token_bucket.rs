//! A token bucket: how many requests a destination may receive and when.
//!
//! Pure: the caller passes the current instant. Tokens refill continuously
//! at `rate` per second up to `burst`.

use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate_per_second: f64,
    burst: f64,
    tokens: f64,
    refilled_at: Instant,
}

impl TokenBucket {
    /// A full bucket. A rate of zero or below is treated as a tiny positive
    /// rate, so a misconfigured destination is slowed, never stuck forever.
    pub fn new(rate_per_second: f64, burst: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            rate_per_second: rate_per_second.max(1e-3),
            burst,
            tokens: burst,
            refilled_at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now
            .saturating_duration_since(self.refilled_at)
            .as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate_per_second).min(self.burst);
        self.refilled_at = now.max(self.refilled_at);
    }

    /// Takes one token, or says how long until one is available.
    pub fn try_take(&mut self, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            let missing = 1.0 - self.tokens;
            Err(Duration::from_secs_f64(missing / self.rate_per_second))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_allows_a_burst_then_paces() {
        let t = Instant::now();
        let mut bucket = TokenBucket::new(5.0, 2, t);
        assert!(bucket.try_take(t).is_ok());
        assert!(bucket.try_take(t).is_ok());
        let wait = bucket.try_take(t).unwrap_err();
        assert_eq!(wait, Duration::from_millis(200));
        assert!(bucket.try_take(t + Duration::from_millis(199)).is_err());
        assert!(bucket.try_take(t + Duration::from_millis(200)).is_ok());
    }

    #[test]
    fn refill_never_exceeds_the_burst() {
        let t = Instant::now();
        let mut bucket = TokenBucket::new(100.0, 3, t);
        for _ in 0..3 {
            bucket.try_take(t).unwrap();
        }
        let later = t + Duration::from_secs(3600);
        for _ in 0..3 {
            assert!(bucket.try_take(later).is_ok());
        }
        assert!(bucket.try_take(later).is_err());
    }

    #[test]
    fn over_a_second_the_rate_holds() {
        let t = Instant::now();
        let mut bucket = TokenBucket::new(5.0, 1, t);
        let granted = (0..=1000)
            .filter(|ms| bucket.try_take(t + Duration::from_millis(*ms)).is_ok())
            .count();
        assert_eq!(granted, 6, "the initial token plus five refills");
    }
}
