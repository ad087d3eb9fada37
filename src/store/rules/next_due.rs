//! When a claim of a region could next find work, written once for the
//! stores that decide in code (the model and SQLite); PostgreSQL's
//! `next_due` statement makes the same choice in SQL.
//!
//! The Claimer asks only after a claim that found nothing, so a row that is
//! claimable already was left out on purpose (its destination is held in
//! this process, it waits in an ordering line, or another process took it)
//! and is the idle backoff's business, not a reason to wake at once. What
//! counts is what becomes claimable after now: per enabled destination, its
//! next unleased row to fall due and, while none is due already, its next
//! lease to run out (never before the row's deadline). A paused
//! destination's rows all count, from the pause's end.
//!
//! "Already" allows [`JUST_MISSED`]: a row that fell due only that long ago
//! may have done so after the empty claim read the time (the claim and
//! this read are two statements), so it counts as coming now (a wait of
//! zero) rather than as left out, which would cost it a whole backoff.

use chrono::{DateTime, Duration, Utc};

/// How long before now a row may have fallen due and still be one the
/// empty claim that asks did not see due.
pub(crate) const JUST_MISSED: Duration = Duration::milliseconds(50);

/// One destination's rows as `next_due` needs them.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) struct Upcoming {
    pub paused_until: Option<DateTime<Utc>>,
    /// The earliest `available_at` of its `pending`/`retry_wait` rows.
    pub first_unleased: Option<DateTime<Utc>>,
    /// The earliest such `available_at` after now less `JUST_MISSED`.
    pub next_unleased: Option<DateTime<Utc>>,
    /// The earliest end of a lease (no earlier than its row's deadline)
    /// after now less `JUST_MISSED`.
    pub next_lease_end: Option<DateTime<Utc>>,
}

/// When the destination's next row becomes claimable after `now` (less
/// `JUST_MISSED`), if ever; the caller waits no less than zero.
pub(in crate::store) fn earliest(now: DateTime<Utc>, d: Upcoming) -> Option<DateTime<Utc>> {
    let now = now - JUST_MISSED;
    let due_already = d.first_unleased.is_some_and(|at| at <= now);
    let at = match d.paused_until.filter(|p| *p > now) {
        Some(pause_end) => {
            let any = if due_already {
                d.first_unleased
            } else {
                min(d.first_unleased, d.next_lease_end)
            };
            any.map(|at| at.max(pause_end))
        }
        None if due_already => d.next_unleased,
        None => min(d.next_unleased, d.next_lease_end),
    };
    at.filter(|at| *at > now)
}

fn min(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    #[test]
    fn only_what_becomes_claimable_after_now_counts() {
        let now = Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, 0).unwrap();
        let s = |n: i64| Some(now + Duration::seconds(n));
        let none = Upcoming {
            paused_until: None,
            first_unleased: None,
            next_unleased: None,
            next_lease_end: None,
        };
        assert_eq!(earliest(now, none), None);
        let future = Upcoming {
            first_unleased: s(5),
            next_unleased: s(5),
            next_lease_end: s(3),
            ..none
        };
        assert_eq!(earliest(now, future), s(3), "a lease ends first");
        let held = Upcoming {
            first_unleased: s(-1),
            ..future
        };
        assert_eq!(
            earliest(now, held),
            s(5),
            "due and left: its leases wait too"
        );
        let just_missed = Upcoming {
            first_unleased: Some(now - Duration::milliseconds(10)),
            next_unleased: Some(now - Duration::milliseconds(10)),
            next_lease_end: None,
            ..none
        };
        assert_eq!(
            earliest(now, just_missed),
            Some(now - Duration::milliseconds(10)),
            "fell due after the claim may have read the time: comes now"
        );
        let paused = Upcoming {
            paused_until: s(60),
            ..held
        };
        assert_eq!(
            earliest(now, paused),
            s(60),
            "a pause's end frees the due row"
        );
        let lease_only = Upcoming {
            paused_until: s(10),
            next_lease_end: s(30),
            ..none
        };
        assert_eq!(earliest(now, lease_only), s(30));
    }
}
