//! When a destination that keeps failing is disabled. Pure: the streak, the
//! thresholds and `now` are arguments; every store applies [`disables`] (the
//! model and SQLite to the row they read, PostgreSQL in its finish
//! statement, held to this by the conformance suite).

use chrono::{DateTime, Duration, Utc};

use crate::domain::AttemptRecord;

/// How long, and over how many attempts, a destination must fail before
/// it is disabled: both must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisableRule {
    /// From the end of the first failure of the streak to now.
    pub after: Duration,
    /// Failures in the streak, the one ending now included.
    pub failures: u32,
}

impl Default for DisableRule {
    fn default() -> Self {
        Self {
            after: Duration::hours(24),
            failures: 20,
        }
    }
}

/// What one ended attempt says about its destination's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// A 2xx: the streak ends.
    Succeeded,
    /// A transport error, a timeout or a non-2xx status (a 429 or 503
    /// without Retry-After included): the streak grows.
    Failed,
    /// Says nothing of the receiver's health: a 429 or 503 carrying
    /// Retry-After (the receiver pacing remit), or an address the send
    /// policy refused before any connection was made.
    Neutral,
}

impl Health {
    pub fn of(record: &AttemptRecord) -> Self {
        match (record.http_status, record.transport_error.as_deref()) {
            (Some(200..=299), _) => Health::Succeeded,
            (Some(429 | 503), _) if record.retry_after_raw.is_some() => Health::Neutral,
            (Some(_), _) => Health::Failed,
            (None, Some("blocked_address")) | (None, None) => Health::Neutral,
            (None, Some(_)) => Health::Failed,
        }
    }

    /// The code the stores carry it as: 1 failed, 0 succeeded, `None`
    /// neutral.
    pub fn code(self) -> Option<i16> {
        match self {
            Health::Succeeded => Some(0),
            Health::Failed => Some(1),
            Health::Neutral => None,
        }
    }
}

/// A destination's run of failures since its last success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streak {
    /// When the first failure of the run ended.
    pub since: DateTime<Utc>,
    /// Failures in the run.
    pub count: u32,
}

impl Streak {
    /// The streak after one more failure at `now`.
    pub fn grow(current: Option<Streak>, now: DateTime<Utc>) -> Streak {
        match current {
            Some(s) => Streak {
                since: s.since,
                count: s.count.saturating_add(1),
            },
            None => Streak {
                since: now,
                count: 1,
            },
        }
    }
}

/// Whether `streak` (the failure ending now included) disables its
/// destination at `now` under `rule`.
pub fn disables(streak: Streak, now: DateTime<Utc>, rule: DisableRule) -> bool {
    streak.count >= rule.failures && now - streak.since >= rule.after
}

/// Why an automatic disable happened, as the destination records it:
/// `auto: 16 failures in a row over 12 minutes`. The streak's length in
/// whole seconds under two minutes, minutes under two hours, hours under
/// two days, then days (each rounded down). The batch finish on
/// PostgreSQL writes the same words in SQL (`END_MANY_SQL`).
pub fn auto_reason(streak: Streak, now: DateTime<Utc>) -> String {
    let seconds = (now - streak.since).num_seconds().max(0);
    let over = match seconds {
        1 => "1 second".to_owned(),
        s if s < 120 => format!("{s} seconds"),
        s if s < 7_200 => format!("{} minutes", s / 60),
        s if s < 172_800 => format!("{} hours", s / 3_600),
        s => format!("{} days", s / 86_400),
    };
    let failures = if streak.count == 1 {
        "failure"
    } else {
        "failures"
    };
    format!("auto: {} {failures} in a row over {over}", streak.count)
}

/// The reason a manual disable records when the operator gives none.
pub const MANUAL_REASON: &str = "manual";

/// The last error a failed attempt leaves on its destination: its status
/// or its transport error kind, never anything the receiver sent.
pub fn last_error(record: &AttemptRecord) -> Option<String> {
    match (record.http_status, record.transport_error.as_deref()) {
        (Some(status), _) => Some(format!("status {status}")),
        (None, Some(kind)) => Some(format!("transport: {kind}")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() + Duration::hours(h)
    }

    fn record(status: Option<u16>, transport: Option<&str>, retry_after: bool) -> AttemptRecord {
        AttemptRecord {
            http_status: status,
            transport_error: transport.map(str::to_owned),
            retry_after_raw: retry_after.then(|| "5".to_owned()),
            ..AttemptRecord::default()
        }
    }

    #[test]
    fn both_the_count_and_the_time_must_be_reached() {
        let rule = DisableRule::default();
        let streak = |since, count| Streak { since, count };
        assert!(!disables(streak(at(0), 19), at(30), rule), "too few");
        assert!(!disables(streak(at(0), 50), at(23), rule), "too soon");
        assert!(disables(streak(at(0), 20), at(24), rule), "both, exactly");
        assert!(disables(streak(at(0), 21), at(25), rule));
    }

    #[test]
    fn a_streak_starts_at_its_first_failure_and_counts_on() {
        let first = Streak::grow(None, at(1));
        assert_eq!(
            first,
            Streak {
                since: at(1),
                count: 1
            }
        );
        let next = Streak::grow(Some(first), at(5));
        assert_eq!(
            next,
            Streak {
                since: at(1),
                count: 2
            }
        );
        assert_eq!(
            auto_reason(next, at(5)),
            "auto: 2 failures in a row over 4 hours"
        );
    }

    #[test]
    fn pacing_is_not_failing() {
        assert_eq!(
            Health::of(&record(Some(204), None, false)),
            Health::Succeeded
        );
        assert_eq!(Health::of(&record(Some(500), None, false)), Health::Failed);
        assert_eq!(Health::of(&record(Some(429), None, false)), Health::Failed);
        assert_eq!(Health::of(&record(Some(503), None, false)), Health::Failed);
        assert_eq!(Health::of(&record(Some(429), None, true)), Health::Neutral);
        assert_eq!(Health::of(&record(Some(503), None, true)), Health::Neutral);
        assert_eq!(Health::of(&record(Some(500), None, true)), Health::Failed);
        assert_eq!(
            Health::of(&record(None, Some("timeout"), false)),
            Health::Failed
        );
        assert_eq!(
            Health::of(&record(None, Some("blocked_address"), false)),
            Health::Neutral
        );
    }

    #[test]
    fn the_last_error_is_a_status_or_a_kind() {
        assert_eq!(
            last_error(&record(Some(500), None, false)).unwrap(),
            "status 500"
        );
        assert_eq!(
            last_error(&record(None, Some("connect"), false)).unwrap(),
            "transport: connect"
        );
    }
}
