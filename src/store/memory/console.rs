//! The console's reads on the model: a task search, each destination's
//! summary, the region's last hour minute by minute, as SQLite's
//! `console.rs` reads them.

use std::cmp::Reverse;

use chrono::{DateTime, Duration, SubsecRound, Utc};

use super::reports::{lateness, most_first};
use super::state::State;
use crate::domain::{Region, Task, TaskId, TaskState};
use crate::store::contract::console::{
    empty_hour, page, Activity, DestinationSummary, LearnedQuota, TaskFilter, TaskPage,
};
use crate::store::contract::Latency;

/// A minute in microseconds: the activity's buckets.
const MINUTE_MICROS: i64 = 60_000_000;

/// Whether `at` is within the hour ending at `now`: (now - 1 hour, now].
fn in_last_hour(at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    at.is_some_and(|at| at > now - Duration::hours(1) && at <= now)
}

/// Whether `task` passes every condition of `filter` that is set.
fn matches(filter: &TaskFilter, task: &Task) -> bool {
    filter.id.is_none_or(|id| task.id == id)
        && filter.tenant.as_ref().is_none_or(|t| &task.tenant_id == t)
        && filter
            .reminder
            .as_ref()
            .is_none_or(|r| &task.reminder_id == r)
        && filter
            .destination
            .as_ref()
            .is_none_or(|d| &task.destination_id == d)
        && filter.state.is_none_or(|s| task.state == s)
        && filter
            .from
            .is_none_or(|from| task.not_before >= from.trunc_subsecs(6))
        && filter
            .until
            .is_none_or(|until| task.not_before < until.trunc_subsecs(6))
        && filter
            .only_tenants
            .as_ref()
            .is_none_or(|tenants| tenants.contains(&task.tenant_id))
}

impl State {
    /// Up to `limit` of the region's tasks matching `filter` below
    /// `before`, newest first.
    pub(super) fn search(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> TaskPage {
        let mut found: Vec<&Task> = self
            .tasks
            .iter()
            .filter(|t| t.region == region && matches(filter, t))
            .filter(|t| before.is_none_or(|before| t.id < before))
            .collect();
        found.sort_by_key(|t| Reverse(t.id));
        // One more than the page, so `page` knows whether another follows.
        let read = usize::try_from(limit)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        page(found.into_iter().take(read).cloned().collect(), limit)
    }

    /// Each destination of the region, by id, with its counts at `now`.
    pub(super) fn summaries(&self, region: Region, now: DateTime<Utc>) -> Vec<DestinationSummary> {
        self.destinations
            .values()
            .filter(|d| d.live() && d.destination.region == region)
            .map(|d| {
                let id = &d.destination.id;
                let own = || self.tasks.iter().filter(move |t| &t.destination_id == id);
                DestinationSummary {
                    destination: d.destination.clone(),
                    learned_quota: d.quota.map(|q| LearnedQuota {
                        limit: q.limit.and_then(|l| i64::try_from(l).ok()),
                        remaining: q.pace.remaining,
                        resets_at: q.pace.resets_at,
                        learned_at: q.learned_at,
                    }),
                    in_flight: own().filter(|t| t.state == TaskState::Leased).count() as i64,
                    due_backlog: own()
                        .filter(|t| matches!(t.state, TaskState::Pending | TaskState::RetryWait))
                        .filter(|t| t.waiting_change.is_none())
                        .filter(|t| t.available_at <= now && t.not_before <= now)
                        .count() as i64,
                    rate_limited_last_hour: self
                        .rate_limited(|t| &t.destination_id == id)
                        .filter(|at| in_last_hour(Some(*at), now))
                        .count() as i64,
                    failed_last_hour: self
                        .failure_log
                        .between(Some(region), now - Duration::hours(1), now)
                        .filter(|f| &f.destination == id)
                        .count() as i64,
                    retrying: own()
                        .filter(|t| match t.state {
                            TaskState::RetryWait => true,
                            TaskState::Leased => t.attempt_count - 1 > t.attempts_before_replay,
                            _ => false,
                        })
                        .count() as i64,
                    oldest_due: own()
                        .filter(|t| !t.state.is_terminal() && t.not_before <= now)
                        .map(|t| t.not_before)
                        .min(),
                }
            })
            .collect()
    }

    /// When each 429 answer to a task `of` picks was recorded.
    fn rate_limited<'a>(
        &'a self,
        of: impl Fn(&Task) -> bool + 'a,
    ) -> impl Iterator<Item = DateTime<Utc>> + 'a {
        self.attempts
            .iter()
            .filter(|a| a.observed.http_status == Some(429))
            .filter(move |a| {
                self.by_id
                    .get(&a.task_id)
                    .is_some_and(|&i| of(&self.tasks[i]))
            })
            .map(|a| a.recorded_at)
    }

    /// The region's hour ending at `now`, minute by minute.
    pub(super) fn activity(&self, region: Region, now: DateTime<Utc>) -> Activity {
        let start = (now - Duration::hours(1)).timestamp_micros();
        // The minute (0 = the oldest) of an instant of the hour: each
        // minute holds its end and not its start.
        let minute = |at: DateTime<Utc>| {
            let into = at.timestamp_micros() - start;
            usize::try_from((into + MINUTE_MICROS - 1) / MINUTE_MICROS - 1).ok()
        };
        let mut minutes = empty_hour(now);
        let mut samples: Vec<Vec<i64>> = vec![Vec::new(); minutes.len()];
        // Failures come from the log (below); cancels are not counted.
        let delivered = self.tasks.iter().filter(|t| {
            t.region == region
                && t.state == TaskState::Delivered
                && in_last_hour(t.finalized_at, now)
        });
        for task in delivered {
            let Some(i) = task.finalized_at.and_then(minute) else {
                continue;
            };
            let Some(m) = minutes.get_mut(i) else {
                continue;
            };
            m.delivered += 1;
            samples[i].extend(lateness(task));
        }
        let limited = self.rate_limited(|t| t.region == region);
        for at in limited.filter(|at| in_last_hour(Some(*at), now)) {
            if let Some(m) = minute(at).and_then(|i| minutes.get_mut(i)) {
                m.rate_limited += 1;
            }
        }
        for (m, s) in minutes.iter_mut().zip(samples) {
            m.deadline_to_delivery = Latency::of(s);
        }
        let failed = self
            .failure_log
            .between(Some(region), now - Duration::hours(1), now);
        for f in failed.clone() {
            if let Some(m) = minute(f.failed_at).and_then(|i| minutes.get_mut(i)) {
                m.failed += 1;
            }
        }
        let failures = failed.map(|f| f.reason.clone());
        Activity {
            now,
            minutes,
            failures_by_reason: most_first(failures),
        }
    }
}
