//! A destination's shared token bucket, written once for the stores that
//! compute it in code (the in-memory model and SQLite); PostgreSQL's
//! `TAKE_SQL` (`rate.rs`) computes the same in SQL. Tokens refill at `rate`
//! per second up to `burst`, and a take grants at most what is there.

use chrono::{DateTime, Utc};

use super::Tokens;

/// A destination's shared token bucket as stored: `None` until first used,
/// which means full.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Bucket {
    pub tokens: Option<f64>,
    pub refilled_at: Option<DateTime<Utc>>,
}

/// Refills the bucket at `rate` per second up to `burst`, then grants at
/// most `want` of the whole tokens there. A taker carrying an older `now`
/// than the last one never runs the bucket's time backwards, and nothing is
/// granted below zero.
pub(super) fn take_tokens(
    bucket: Bucket,
    rate_per_second: f64,
    burst: u32,
    want: u32,
    now: DateTime<Utc>,
) -> (Tokens, Bucket) {
    let rate = rate_per_second.max(1e-3);
    let burst = f64::from(burst.max(1));
    let refilled = bucket.refilled_at.unwrap_or(now);
    let elapsed = ((now - refilled).num_microseconds().unwrap_or(0) as f64 / 1e6).max(0.0);
    let tokens = (bucket.tokens.unwrap_or(burst) + elapsed * rate).min(burst);
    let granted = tokens.floor().min(f64::from(want.max(1))).max(0.0);
    let after = Bucket {
        tokens: Some(tokens - granted),
        refilled_at: Some(now.max(refilled)),
    };
    let answer = if granted >= 1.0 {
        Tokens::Granted(granted as u32)
    } else {
        // A bucket row holding nonsense (NaN, or deeply negative) waits a
        // minute rather than panicking the taker.
        Tokens::WaitFor(
            std::time::Duration::try_from_secs_f64((1.0 - tokens).max(0.0) / rate)
                .unwrap_or(std::time::Duration::from_secs(60)),
        )
    };
    (answer, after)
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0)
            .single()
            .unwrap_or_default()
    }

    #[test]
    fn a_bucket_never_runs_time_backwards() {
        let now = t0();
        let (first, bucket) = take_tokens(Bucket::default(), 1.0, 2, 2, now);
        assert_eq!(first, Tokens::Granted(2));
        // A taker whose now is a minute older refills nothing and does not
        // move the bucket's time back.
        let (second, after) = take_tokens(bucket, 1.0, 2, 1, now - Duration::minutes(1));
        assert!(matches!(second, Tokens::WaitFor(_)), "{second:?}");
        assert_eq!(after.refilled_at, Some(now));
        let (third, _) = take_tokens(after, 1.0, 2, 1, now + Duration::seconds(1));
        assert_eq!(third, Tokens::Granted(1));
    }
}
