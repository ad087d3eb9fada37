//! The alert check's rule, written once: every store reads what it kept
//! from the last check and what it found since (its own queries, bounded
//! and indexed), hands both to [`fold`], and writes the plan back in the
//! same transaction.
//!
//! What is found:
//! - *failed*: each move of a task into `failed` is recorded as it happens
//!   (a trigger on PostgreSQL and SQLite; the model compares), and the
//!   check takes the region's oldest, by (`failed_at`, task);
//! - *late*: per destination, the live tasks not yet announced late
//!   whose `not_before` is at least `late_after` old, oldest first;
//! - *horizon ending*: the region's live tasks not yet announced whose
//!   retry horizon comes within `horizon_warning` of now, soonest first.
//!
//! Each store keeps, per live task, whether it was announced late and
//! whether its horizon was (a mark the check sets on what it found, read
//! through an index of the unmarked tasks, so a check reads only what it
//! announces, however long the backlog). A move of the deadline clears
//! the late mark, a move of the horizon the other, and a task that comes
//! back to life (a replay) has neither. So a task backdated when
//! scheduled, moved to an earlier time, or given a horizon shorter than
//! others' is announced as surely as one that turns late in order: there
//! is no cursor for it to fall behind.
//! - *failing* and *recovered*: each destination's streak against the
//!   level last announced for it.
//!
//! Coalescing: what is found of a coalesced kind for a destination is
//! held (a count, a sample of the first tasks, and for failures a count by
//! reason); an event carrying all that is held goes out when none of its
//! kind went out for the destination in the last `window`, else the next
//! check after the window has passed sends it. So a destination's outage
//! sends at most one event of each kind per window, each saying how many
//! tasks since the one before.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use crate::domain::{
    Destination, DestinationEvent, DestinationId, EventKind, Region, Task, TaskId,
};
use crate::policy::{self, DisableRule};
use crate::store::contract::{AlertCheck, AlertsChecked};

use super::alert_events::{coalesced, instant, streak_events};
pub(in crate::store) use super::alert_events::{DestinationAlerts, Held};

/// One coalesced kind of one destination: when its last event went out,
/// and what waits for the next.
#[derive(Debug, Clone, Default, PartialEq)]
pub(in crate::store) struct Window {
    pub last_sent: Option<DateTime<Utc>>,
    pub held: Option<Held>,
}

/// A task's move into `failed`, as recorded when it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::store) struct FailedTask {
    pub task_id: TaskId,
    pub failed_at: DateTime<Utc>,
    pub destination: DestinationId,
    pub tenant_id: String,
    pub reminder_id: String,
    pub reason: String,
    pub attempts: i32,
    pub not_before: DateTime<Utc>,
}

/// One destination's late check: its live tasks not yet announced late,
/// up to `cutoff` by `not_before`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::store) struct LateScan {
    pub destination: DestinationId,
    pub cutoff: DateTime<Utc>,
    pub late_after: Duration,
}

/// What the store kept from the last check, read at this one's start.
#[derive(Debug, Clone, Default)]
pub(in crate::store) struct Kept {
    pub destinations: BTreeMap<DestinationId, DestinationAlerts>,
    pub windows: BTreeMap<(DestinationId, EventKind), Window>,
}

/// What the store's queries found.
#[derive(Debug, Clone, Default)]
pub(in crate::store) struct Found {
    /// Oldest first, at most `batch`.
    pub failed: Vec<FailedTask>,
    /// Each scan's live tasks not yet announced late, by (`not_before`,
    /// task), at most `batch` a scan.
    pub late: Vec<Task>,
    /// The region's live tasks whose horizon was not yet announced, by
    /// (`retry_horizon_at`, task), at most `batch`.
    pub horizon: Vec<Task>,
}

/// What the store writes back, in the check's transaction.
#[derive(Debug, Clone, Default)]
pub(in crate::store) struct Plan {
    /// New events for the outbox.
    pub events: Vec<DestinationEvent>,
    /// Rows of destinations that changed (upserted).
    pub destinations: Vec<(DestinationId, DestinationAlerts)>,
    /// Windows that changed (upserted).
    pub windows: Vec<(DestinationId, EventKind, Window)>,
    /// Tasks now announced late (marked, so no later check finds them),
    /// each with the deadline it was announced for: a task moved since the
    /// check read it is not marked.
    pub late_seen: Vec<(TaskId, DateTime<Utc>)>,
    /// Tasks whose horizon is now announced, each with that horizon.
    pub horizon_seen: Vec<(TaskId, DateTime<Utc>)>,
    /// The recorded failures now dealt with (deleted).
    pub failures_done: Vec<(TaskId, DateTime<Utc>)>,
    pub checked: AlertsChecked,
}

/// A destination's own lateness setting (`late_after_seconds`), in whole
/// seconds, if it has one; `None` takes the configured default
/// (`events.late_after_seconds`).
pub(in crate::store) fn own_late_after(d: &Destination) -> Option<i64> {
    d.settings.late_after_seconds
}

/// Whether events may report on `d` at all.
fn reported(check: &AlertCheck, d: &DestinationId) -> bool {
    check.quiet_prefix.is_empty() || !d.as_str().starts_with(&check.quiet_prefix)
}

/// The late check of each destination of the region the check reports on.
pub(in crate::store) fn late_scans(
    check: &AlertCheck,
    now: DateTime<Utc>,
    destinations: &[Destination],
) -> Vec<LateScan> {
    if !check.announce {
        return Vec::new();
    }
    destinations
        .iter()
        .filter(|d| d.region == check.region && reported(check, &d.id))
        .map(|d| {
            let late_after = policy::late_after(own_late_after(d), check.late_after);
            LateScan {
                destination: d.id.clone(),
                cutoff: now - late_after,
                late_after,
            }
        })
        .collect()
}

/// The last instant the horizon check reads up to.
pub(in crate::store) fn horizon_until(check: &AlertCheck, now: DateTime<Utc>) -> DateTime<Utc> {
    now + check.horizon_warning
}

/// Whether a task has not ended.
pub(in crate::store) fn live(t: &Task) -> bool {
    !t.state.is_terminal()
}

/// What one check does with what it found.
pub(in crate::store) fn fold(
    check: &AlertCheck,
    now: DateTime<Utc>,
    default_rule: DisableRule,
    destinations: &[Destination],
    scans: &[LateScan],
    mut kept: Kept,
    found: Found,
) -> Plan {
    let mut plan = Plan {
        failures_done: found
            .failed
            .iter()
            .map(|f| (f.task_id, f.failed_at))
            .collect(),
        ..Plan::default()
    };
    if !check.announce {
        return plan;
    }
    let region = check.region;
    let known: BTreeMap<&DestinationId, &Destination> = destinations
        .iter()
        .filter(|d| d.region == region)
        .map(|d| (&d.id, d))
        .collect();
    let mut changed_windows: BTreeMap<(DestinationId, EventKind), Window> = BTreeMap::new();
    let mut hold = |kind: EventKind, d: &DestinationId, item: Value, reason: Option<&str>| {
        if !reported(check, d) || !known.contains_key(d) {
            return false;
        }
        let key = (d.clone(), kind);
        let window = changed_windows
            .entry(key.clone())
            .or_insert_with(|| kept.windows.get(&key).cloned().unwrap_or_default());
        let held = window.held.get_or_insert_with(|| Held {
            count: 0,
            since: now,
            sample: Vec::new(),
            reasons: BTreeMap::new(),
        });
        held.count += 1;
        if held.sample.len() < check.sample {
            held.sample.push(item);
        }
        if let Some(reason) = reason {
            *held.reasons.entry(reason.to_owned()).or_default() += 1;
        }
        true
    };

    for f in &found.failed {
        let item = json!({
            "task_id": f.task_id.to_string(),
            "tenant_id": f.tenant_id,
            "reminder_id": f.reminder_id,
            "reason": f.reason,
            "attempts": f.attempts,
            "not_before": instant(f.not_before),
            "failed_at": instant(f.failed_at),
        });
        if hold(EventKind::TaskFailed, &f.destination, item, Some(&f.reason)) {
            plan.checked.failed += 1;
        }
    }

    let late_after: BTreeMap<&DestinationId, Duration> = scans
        .iter()
        .map(|s| (&s.destination, s.late_after))
        .collect();
    let mut changed: BTreeSet<DestinationId> = BTreeSet::new();
    for t in &found.late {
        let Some(&after) = late_after.get(&t.destination_id) else {
            continue;
        };
        plan.late_seen.push((t.id, t.not_before));
        let item = json!({
            "task_id": t.id.to_string(),
            "tenant_id": t.tenant_id.as_str(),
            "reminder_id": t.reminder_id.as_str(),
            "state": t.state.as_str(),
            "attempts": t.attempt_count,
            "not_before": instant(t.not_before),
            "late_at": instant(t.not_before + after),
        });
        if hold(EventKind::ReminderLate, &t.destination_id, item, None) {
            plan.checked.late += 1;
        }
    }

    for t in &found.horizon {
        plan.horizon_seen.push((t.id, t.retry_horizon_at));
        if !live(t) {
            continue;
        }
        let item = json!({
            "task_id": t.id.to_string(),
            "tenant_id": t.tenant_id.as_str(),
            "reminder_id": t.reminder_id.as_str(),
            "state": t.state.as_str(),
            "attempts": t.attempt_count,
            "not_before": instant(t.not_before),
            "retry_horizon_at": instant(t.retry_horizon_at),
        });
        if hold(EventKind::HorizonEnding, &t.destination_id, item, None) {
            plan.checked.horizon_ending += 1;
        }
    }
    // Windows with something held, found now or before.
    for (key, window) in &kept.windows {
        if window.held.is_some() && !changed_windows.contains_key(key) {
            changed_windows.insert(key.clone(), window.clone());
        }
    }
    for ((d, kind), mut window) in changed_windows {
        let unchanged = kept.windows.get(&(d.clone(), kind)) == Some(&window);
        let due = policy::may_send(window.last_sent, now, check.window);
        match window.held.take_if(|_| due) {
            Some(held) => {
                plan.events.push(coalesced(check, kind, &d, now, &held));
                window.last_sent = Some(now);
            }
            None if unchanged => continue,
            None => {}
        }
        plan.windows.push((d, kind, window));
    }

    for d in known.values() {
        if !reported(check, &d.id) {
            continue;
        }
        let before = kept.destinations.get(&d.id).cloned().unwrap_or_default();
        let mut after = before.clone();
        streak_events(check, now, default_rule, d, &mut after, &mut plan.events);
        if after != before {
            kept.destinations.insert(d.id.clone(), after);
            changed.insert(d.id.clone());
        }
    }
    plan.destinations = kept
        .destinations
        .into_iter()
        .filter(|(id, _)| changed.contains(id))
        .collect();
    plan.checked.events = u32::try_from(plan.events.len()).unwrap_or(u32::MAX);
    plan
}

/// The region's lock key for the check on PostgreSQL (an advisory lock):
/// an arbitrary constant beside the region's name.
pub(in crate::store) fn lock_name(region: Region) -> String {
    format!("remit alert check {}", region.as_str())
}
