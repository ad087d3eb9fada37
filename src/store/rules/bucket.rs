//! A destination's shared token bucket, written once for the stores that
//! compute it in code (the in-memory model and SQLite); PostgreSQL's
//! `TAKE_SQL` (`rate.rs`) computes the same in SQL. Tokens refill at `rate`
//! per second up to `burst`, and a take grants at most what is there.
//!
//! A quota the receiver announced ([`Learned`]) paces the bucket until it
//! resets: the rate falls to what lets the remaining requests last until
//! the reset (never above the configured rate), the bucket holds no more
//! than remain, and with none left nothing is granted until the reset.
//! Every grant is taken off what remains, so every process of the region
//! paces by the same count until a response announces a newer one.
//!
//! At the reset, a quota whose receiver named its limit and window renews
//! once: the limit remains for the window that holds `now` (windows follow
//! one another from the reset). Without it, every process would take a
//! whole burst at the configured rate the moment the reset passed, all
//! into a window the receiver allows only its limit in; with it, they pace
//! at the limit over the window until an answer says more. Renewed once
//! only, so a receiver that stops announcing is not paced by what it said
//! long ago: past the renewed window (or at a reset without a window) the
//! configured rate applies again.
//!
//! The bucket numbers the tokens it grants (`granted` counts them), so an
//! answer can be placed among them: `store::rules::quota` takes the tokens
//! granted after the answered request's own off what its answer announced.

use chrono::{DateTime, Duration, Utc};

use crate::store::contract::RateGrant;

/// A destination's shared token bucket as stored: `None` until first used,
/// which means full.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(in crate::store) struct Bucket {
    pub tokens: Option<f64>,
    pub refilled_at: Option<DateTime<Utc>>,
    pub quota: Option<Learned>,
    /// Tokens granted so far, ever: the number of the last one.
    pub granted: u64,
}

/// What a receiver last announced of its quota, as the destination's row
/// keeps it: requests left (less those granted since) until `resets_at`,
/// on the store's clock, and the window it renews to at the reset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::store) struct Learned {
    pub remaining: f64,
    pub resets_at: DateTime<Utc>,
    pub renews: Option<Renewal>,
}

/// The window that follows a reset and the limit it holds, as the
/// receiver's policy named them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::store) struct Renewal {
    pub limit: u64,
    pub window: Duration,
}

/// The quota in force at `now`: the one learned until its reset; then,
/// when it renews, its limit until the end of the window that holds `now`
/// (renewed once: that quota does not renew again).
fn in_force(quota: Option<Learned>, now: DateTime<Utc>) -> Option<Learned> {
    let q = quota?;
    if q.resets_at > now {
        return Some(q);
    }
    let renewal = q.renews?;
    let window = renewal.window.num_microseconds()?.max(1);
    let past = (now - q.resets_at).num_microseconds().unwrap_or(i64::MAX);
    let windows = past / window + 1;
    Some(Learned {
        remaining: renewal.limit as f64,
        resets_at: q
            .resets_at
            .checked_add_signed(Duration::microseconds(window.saturating_mul(windows)))?,
        renews: None,
    })
}

/// The pace a take uses at `now`: the rate, the most the bucket may hold,
/// and the quota it is paced by (none once the quota has reset and not
/// renewed).
fn pace(
    rate_per_second: f64,
    burst: u32,
    quota: Option<Learned>,
    now: DateTime<Utc>,
) -> (f64, f64, Option<Learned>) {
    let rate = rate_per_second.max(1e-3);
    let burst = f64::from(burst.max(1));
    match in_force(quota, now) {
        None => (rate, burst, None),
        Some(q) => {
            let remaining = if q.remaining.is_finite() {
                q.remaining.max(0.0)
            } else {
                0.0
            };
            let left = (seconds(q.resets_at - now)).max(1e-3);
            let paced = (remaining / left).clamp(1e-3, rate);
            (paced, burst.min(remaining.floor()), Some(q))
        }
    }
}

fn seconds(d: Duration) -> f64 {
    d.num_microseconds().unwrap_or(i64::MAX) as f64 / 1e6
}

/// Refills the bucket at the paced rate up to its cap, then grants at most
/// `want` of the whole tokens there. A taker carrying an older `now` than
/// the last one never runs the bucket's time backwards, and nothing is
/// granted below zero.
pub(in crate::store) fn take_tokens(
    bucket: Bucket,
    rate_per_second: f64,
    burst: u32,
    want: u32,
    now: DateTime<Utc>,
) -> (RateGrant, Bucket) {
    let (rate, cap, paced_by) = pace(rate_per_second, burst, bucket.quota, now);
    let refilled = bucket.refilled_at.unwrap_or(now);
    let elapsed = seconds(now - refilled).max(0.0);
    let tokens = (bucket.tokens.unwrap_or(cap) + elapsed * rate).min(cap);
    let granted = tokens.floor().min(f64::from(want.max(1))).max(0.0);
    let count = granted as u32;
    let after = Bucket {
        tokens: Some(tokens - granted),
        refilled_at: Some(now.max(refilled)),
        granted: bucket.granted.saturating_add(u64::from(count)),
        quota: match (bucket.quota, paced_by) {
            (_, Some(q)) => Some(Learned {
                remaining: (q.remaining - granted).max(0.0),
                ..q
            }),
            (kept, None) => kept,
        },
    };
    let answer = match paced_by {
        _ if count >= 1 => RateGrant::Granted {
            tokens: count,
            last: after.granted,
        },
        // Nothing remains: nothing until the reset, which the reading of
        // the announcement capped at `retry.max_server_delay_seconds`.
        Some(q) if q.remaining < 1.0 => {
            RateGrant::WaitFor((q.resets_at - now).to_std().unwrap_or_default())
        }
        // A bucket row holding nonsense (NaN, or deeply negative) waits a
        // minute rather than panicking the taker.
        _ => RateGrant::WaitFor(
            std::time::Duration::try_from_secs_f64((1.0 - tokens).max(0.0) / rate)
                .unwrap_or(std::time::Duration::from_secs(60)),
        ),
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

    fn granted(tokens: u32, last: u64) -> RateGrant {
        RateGrant::Granted { tokens, last }
    }

    #[test]
    fn a_bucket_never_runs_time_backwards() {
        let now = t0();
        let (first, bucket) = take_tokens(Bucket::default(), 1.0, 2, 2, now);
        assert_eq!(first, granted(2, 2));
        // A taker whose now is a minute older refills nothing and does not
        // move the bucket's time back.
        let (second, after) = take_tokens(bucket, 1.0, 2, 1, now - Duration::minutes(1));
        assert!(matches!(second, RateGrant::WaitFor(_)), "{second:?}");
        assert_eq!(after.refilled_at, Some(now));
        let (third, _) = take_tokens(after, 1.0, 2, 1, now + Duration::seconds(1));
        assert_eq!(third, granted(1, 3));
    }

    fn quota(remaining: f64, resets_in: Duration) -> Option<Learned> {
        Some(Learned {
            remaining,
            resets_at: t0() + resets_in,
            renews: None,
        })
    }

    #[test]
    fn an_announced_quota_lowers_the_rate_so_what_remains_lasts_until_the_reset() {
        // 10 left for 10 s against a configured 100/s with a burst of 4: the
        // bucket holds at most 4 and refills at 1/s.
        let bucket = Bucket {
            quota: quota(10.0, Duration::seconds(10)),
            ..Bucket::default()
        };
        let (first, after) = take_tokens(bucket, 100.0, 4, 10, t0());
        assert_eq!(first, granted(4, 4));
        assert_eq!(after.quota.map(|q| q.remaining), Some(6.0));
        // 6 left for 10 s: 0.6/s, so one more token after about 1.7 s.
        match take_tokens(after, 100.0, 4, 10, t0()).0 {
            RateGrant::WaitFor(wait) => {
                assert!((1.6..1.7).contains(&wait.as_secs_f64()), "{wait:?}")
            }
            other => panic!("{other:?}"),
        }
        let (later, _) = take_tokens(after, 100.0, 4, 10, t0() + Duration::seconds(2));
        assert_eq!(later, granted(1, 5));
    }

    #[test]
    fn never_faster_than_configured_and_nothing_until_the_reset_when_none_remain() {
        // Plenty left: the configured 2/s holds.
        let plenty = Bucket {
            tokens: Some(0.0),
            refilled_at: Some(t0()),
            quota: quota(1000.0, Duration::seconds(10)),
            granted: 0,
        };
        let (tokens, _) = take_tokens(plenty, 2.0, 10, 10, t0() + Duration::seconds(1));
        assert_eq!(tokens, granted(2, 2));

        let spent = Bucket {
            tokens: Some(10.0),
            refilled_at: Some(t0()),
            quota: quota(0.0, Duration::seconds(30)),
            granted: 0,
        };
        let (held, after) = take_tokens(spent, 100.0, 10, 10, t0());
        assert_eq!(held, RateGrant::WaitFor(std::time::Duration::from_secs(30)));
        assert_eq!(
            after.tokens,
            Some(0.0),
            "the bucket held none while none remained"
        );
        // Past the reset the configured rate applies again (refilled up to
        // its burst) and the spent quota no longer counts.
        let reset = t0() + Duration::seconds(30);
        let (again, after) = take_tokens(after, 100.0, 10, 10, reset + Duration::milliseconds(50));
        assert_eq!(again, granted(10, 10));
        assert_eq!(after.quota.map(|q| q.remaining), Some(0.0));
    }
}

#[cfg(test)]
mod renewal_tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_renewed_quota_lasts_to_the_end_of_the_window_that_holds_now() {
        let reset = Utc
            .with_ymd_and_hms(2026, 8, 13, 9, 0, 0)
            .single()
            .unwrap_or_default();
        let learned = Learned {
            remaining: 0.0,
            resets_at: reset,
            renews: Some(Renewal {
                limit: 20,
                window: Duration::seconds(2),
            }),
        };
        assert_eq!(
            in_force(Some(learned), reset - Duration::seconds(1)),
            Some(learned)
        );
        let renewed =
            |at| in_force(Some(learned), at).map(|q| (q.remaining, q.resets_at, q.renews));
        assert_eq!(
            renewed(reset),
            Some((20.0, reset + Duration::seconds(2), None))
        );
        // Two windows and a half past the reset: the third window.
        assert_eq!(
            renewed(reset + Duration::milliseconds(4_500)),
            Some((20.0, reset + Duration::seconds(6), None))
        );
        let once = Learned {
            renews: None,
            ..learned
        };
        assert_eq!(in_force(Some(once), reset), None, "renewed once only");
    }
}
