//! When remit tells a person that something goes wrong. Pure: the streak,
//! the thresholds and `now` are arguments; the stores' alert check
//! (`store::rules::alerts`) applies these to the rows it reads.
//!
//! - A destination is *failing* at a level, a percentage of its disable
//!   threshold: how far its failure streak has come towards the disable,
//!   which needs both the count and the time, so the smaller of the two
//!   ratios ([`failing_percent`]).
//! - A reminder is *late* once `late_after` has passed since its
//!   `not_before` and it is still not delivered ([`late_after`]).
//! - Events that report tasks are coalesced per kind and destination: at
//!   most one in any `window` ([`may_send`]).

use chrono::{DateTime, Duration, Utc};

use super::health::DisableRule;
use super::health::Streak;

/// How far `streak` has come towards disabling its destination under
/// `rule`, in whole percent (rounded down, at most 100): the smaller of
/// its count over `rule.failures` and its age (from the end of its first
/// failure to `now`) over `rule.after`. A rule with no time to wait
/// counts the time as reached.
pub fn failing_percent(streak: Streak, now: DateTime<Utc>, rule: DisableRule) -> u8 {
    let by_count = u64::from(streak.count) * 100 / u64::from(rule.failures.max(1));
    let by_time = match rule.after.num_milliseconds() {
        after if after <= 0 => 100,
        after => {
            let age = (now - streak.since).num_milliseconds().max(0);
            u64::try_from(i128::from(age) * 100 / i128::from(after)).unwrap_or(u64::MAX)
        }
    };
    u8::try_from(by_count.min(by_time).min(100)).unwrap_or(100)
}

/// The highest of `levels` that `percent` has reached, if any.
pub fn level_reached(percent: u8, levels: &[u8]) -> Option<u8> {
    levels.iter().copied().filter(|&l| l <= percent).max()
}

/// How long after its `not_before` a reminder of a destination may stay
/// undelivered before it is late: the destination's own setting
/// (`own_seconds`, whole seconds) where it has one, else `default`.
pub fn late_after(own_seconds: Option<i64>, default: Duration) -> Duration {
    own_seconds.map_or(default, Duration::seconds)
}

/// Whether a coalesced event of a kind and destination may go out at
/// `now`, the last one having gone out at `last_sent`: at most one in any
/// `window`.
pub fn may_send(last_sent: Option<DateTime<Utc>>, now: DateTime<Utc>, window: Duration) -> bool {
    last_sent.is_none_or(|last| now - last >= window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(minutes: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() + Duration::minutes(minutes)
    }

    fn rule(failures: u32, after_minutes: i64) -> DisableRule {
        DisableRule {
            after: Duration::minutes(after_minutes),
            failures,
        }
    }

    #[test]
    fn the_level_is_the_smaller_ratio() {
        let streak = |count| Streak {
            since: at(0),
            count,
        };
        // 10 of 20 failures, 60 of 100 minutes: 50.
        assert_eq!(failing_percent(streak(10), at(60), rule(20, 100)), 50);
        // 19 of 20 failures, 30 of 100 minutes: 30.
        assert_eq!(failing_percent(streak(19), at(30), rule(20, 100)), 30);
        // Past both: capped.
        assert_eq!(failing_percent(streak(60), at(500), rule(20, 100)), 100);
        // No time to wait: the count alone.
        assert_eq!(failing_percent(streak(9), at(0), rule(10, 0)), 90);
        // Rounded down: 9 of 10 failures, 89.99 % of the time.
        let nearly = at(0) + Duration::milliseconds(8_999);
        assert_eq!(
            failing_percent(
                streak(9),
                nearly,
                DisableRule {
                    after: Duration::seconds(10),
                    failures: 10
                }
            ),
            89
        );
    }

    #[test]
    fn the_level_reached_is_the_highest_below() {
        assert_eq!(level_reached(49, &[50, 90]), None);
        assert_eq!(level_reached(50, &[50, 90]), Some(50));
        assert_eq!(level_reached(95, &[90, 50]), Some(90));
    }

    #[test]
    fn a_destination_may_set_its_own_lateness() {
        assert_eq!(late_after(None, Duration::minutes(5)), Duration::minutes(5));
        assert_eq!(
            late_after(Some(30), Duration::minutes(5)),
            Duration::seconds(30)
        );
    }

    #[test]
    fn one_event_per_window() {
        let w = Duration::minutes(5);
        assert!(may_send(None, at(0), w));
        assert!(!may_send(Some(at(0)), at(4), w));
        assert!(may_send(Some(at(0)), at(5), w));
    }
}
