//! What an ended attempt does to its destination's row, written once for
//! the model and SQLite (PostgreSQL says the same in its finish statement,
//! `postgres/leases/finish_many`): a failure grows the streak, records its error
//! and when it happened, and may disable the destination; a success ends a
//! streak and clears the last error (the destination has recovered); a
//! success with neither writes nothing.
//!
//! A batch of finishes applies this to its applied finishes one after
//! another, in the batch's order, exactly as if each came alone: failures
//! that tip the streak disable the destination there (the event is the
//! destination as that failure left it), and a later success of the batch
//! ends the streak without enabling it again. PostgreSQL's one statement
//! folds the batch the same way, row by row, rather than reading each
//! destination back into Rust: the finish stays one round trip. The
//! conformance cases on mixed batches hold the two equal.

use chrono::{DateTime, Duration, Utc};

use crate::domain::{AttemptRecord, Destination, DestinationEvent, DestinationHealth, EventKind};
use crate::policy::{self, DisableRule, Health, Streak};

/// The thresholds in force for `d`: its own where it has them, else the
/// store's.
pub(in crate::store) fn rule_for(d: &DestinationHealth, default: DisableRule) -> DisableRule {
    DisableRule {
        after: d
            .overrides
            .after_seconds
            .map_or(default.after, Duration::seconds),
        failures: d.overrides.failures.unwrap_or(default.failures),
    }
}

/// Applies one ended attempt to its destination. `None` when the row is
/// unchanged (nothing to write); otherwise whether it was disabled now.
pub(in crate::store) fn after_attempt(
    d: &mut Destination,
    record: &AttemptRecord,
    now: DateTime<Utc>,
    default: DisableRule,
) -> Option<bool> {
    match Health::of(record) {
        Health::Neutral => None,
        Health::Succeeded if d.health.failure_streak == 0 && d.health.last_error.is_none() => None,
        Health::Succeeded => {
            d.health.failure_streak = 0;
            d.health.failure_streak_since = None;
            d.health.last_error = None;
            d.health.last_error_at = None;
            Some(false)
        }
        Health::Failed => {
            let current = d.health.failure_streak_since.map(|since| Streak {
                since,
                count: d.health.failure_streak,
            });
            let streak = Streak::grow(current, now);
            d.health.failure_streak = streak.count;
            d.health.failure_streak_since = Some(streak.since);
            d.health.last_error = policy::last_error(record);
            d.health.last_error_at = Some(now);
            let tips = d.enabled && policy::disables(streak, now, rule_for(&d.health, default));
            if tips {
                d.enabled = false;
                d.health.disabled_reason = Some(policy::auto_reason(streak, now));
                d.health.disabled_at = Some(now);
            }
            Some(tips)
        }
    }
}

/// Disables `d` by hand: `reason`, or `manual`. An already disabled
/// destination keeps its first reason and time. The event to record, when
/// it changed.
pub(in crate::store) fn disable(
    d: &mut Destination,
    reason: Option<String>,
    now: DateTime<Utc>,
) -> Option<DestinationEvent> {
    if !d.enabled {
        return None;
    }
    d.enabled = false;
    d.health.disabled_reason = Some(reason.unwrap_or_else(|| policy::MANUAL_REASON.into()));
    d.health.disabled_at = Some(now);
    Some(DestinationEvent::of(EventKind::Disabled, d, now))
}

/// Enables `d`: the streak and the reason are cleared (the last error
/// stays until a success clears it). The event to record, when it was disabled.
pub(in crate::store) fn enable(
    d: &mut Destination,
    now: DateTime<Utc>,
) -> Option<DestinationEvent> {
    let was_disabled = !d.enabled;
    d.enabled = true;
    d.health.failure_streak = 0;
    d.health.failure_streak_since = None;
    d.health.disabled_reason = None;
    d.health.disabled_at = None;
    was_disabled.then(|| DestinationEvent::of(EventKind::Enabled, d, now))
}
