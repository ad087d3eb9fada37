//! `Reports` on the model, and the status it reports: the same reads
//! SQLite's `status.rs` makes (the console's are in `console.rs`), over
//! the model's rows, each from one lock so that
//! its parts agree as a database snapshot's do. The clock and a search's
//! instants are taken to the microsecond, as PostgreSQL binds them.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use chrono::{DateTime, Duration, SubsecRound, Utc};

use super::state::{DestinationRecord, State};
use super::store::MemStore;
use crate::domain::{
    AuditFilter, AuditPage, DestinationHour, DestinationId, Region, Task, TaskId, TaskState,
};
use crate::store::contract::console::{Activity, DestinationSummary, TaskFilter, TaskPage};
use crate::store::contract::status::{REFUSED_RECENTLY, TOP};
use crate::store::contract::{
    Latency, Refused, RegionCounts, RegionStatus, Reports, StatusReport, StoreError,
};

impl MemStore {
    /// The clock as PostgreSQL reads a pinned one: to the microsecond.
    fn report_time(&self) -> DateTime<Utc> {
        self.now().trunc_subsecs(6)
    }
}

/// The time from a delivered task's deadline to its delivery, in
/// microseconds (what the stores compute their percentiles over).
pub(super) fn lateness(task: &Task) -> Option<i64> {
    let delivered = task.delivered_at?;
    Some(delivered.timestamp_micros() - task.not_before.timestamp_micros())
}

/// Counts by name, most first, then by name: the order every "top" and
/// "by reason" list of the reports has.
pub(super) fn most_first<K: Ord + Clone>(names: impl Iterator<Item = K>) -> Vec<(K, i64)> {
    let mut counts: BTreeMap<K, i64> = BTreeMap::new();
    for name in names {
        *counts.entry(name).or_default() += 1;
    }
    let mut counted: Vec<(K, i64)> = counts.into_iter().collect();
    // Stable: equal counts keep the name order the map gave them.
    counted.sort_by_key(|c| Reverse(c.1));
    counted
}

impl State {
    fn destination_of(&self, task: &Task) -> Option<&DestinationRecord> {
        self.destinations.get(&task.destination_id)
    }

    /// The instant a task becomes due: its deadline, or later when a retry
    /// or hand-back put it off.
    fn due_at(task: &Task) -> DateTime<Utc> {
        task.available_at.max(task.not_before)
    }

    /// Whether a claim would take `task` now (as the stores' oldest
    /// eligible task is read): due, unleased, with no change waiting for
    /// its attempt, its destination enabled and not paused.
    fn eligible(&self, task: &Task, now: DateTime<Utc>) -> bool {
        let waiting = matches!(task.state, TaskState::Pending | TaskState::RetryWait)
            && task.waiting_change.is_none();
        let open = self.destination_of(task).is_some_and(|d| {
            d.destination.enabled && d.destination.paused_until.is_none_or(|until| until <= now)
        });
        waiting && Self::due_at(task) <= now && open
    }

    fn expired_lease(task: &Task, now: DateTime<Utc>) -> bool {
        task.state == TaskState::Leased && task.lease_expires_at.is_some_and(|at| at <= now)
    }

    /// How long the oldest of `tasks` a claim would take now has waited.
    fn oldest_eligible<'a>(
        &self,
        tasks: impl Iterator<Item = &'a Task>,
        now: DateTime<Utc>,
    ) -> Option<Duration> {
        tasks
            .filter(|t| self.eligible(t, now))
            .map(Self::due_at)
            .min()
            .map(|due| now - due)
    }

    /// Tasks by state per region that has any (one region's, or all), in
    /// region order; a task counts only beside its destination, as the
    /// stores' join has it.
    pub(super) fn regions(&self, only: Option<Region>, now: DateTime<Utc>) -> Vec<RegionStatus> {
        let mut by_region: BTreeMap<&str, Vec<&Task>> = BTreeMap::new();
        for task in &self.tasks {
            if only.is_some_and(|r| r != task.region) || self.destination_of(task).is_none() {
                continue;
            }
            by_region
                .entry(task.region.as_str())
                .or_default()
                .push(task);
        }
        by_region
            .into_values()
            .map(|tasks| {
                let count = |state| tasks.iter().filter(|t| t.state == state).count() as i64;
                RegionStatus {
                    region: Some(tasks[0].region),
                    pending: count(TaskState::Pending),
                    leased: count(TaskState::Leased),
                    retry_wait: count(TaskState::RetryWait),
                    delivered: count(TaskState::Delivered),
                    failed: count(TaskState::Failed),
                    cancelled: count(TaskState::Cancelled),
                    oldest_eligible: self.oldest_eligible(tasks.iter().copied(), now),
                    expired_leases: tasks.iter().filter(|t| Self::expired_lease(t, now)).count()
                        as i64,
                    disabled_destinations: 0,
                }
            })
            .collect()
    }

    /// One region's live tasks and its disabled destinations, for the
    /// gauges; ended tasks are not counted.
    pub(super) fn queue(&self, region: Region, now: DateTime<Utc>) -> RegionStatus {
        let tasks: Vec<&Task> = self.tasks.iter().filter(|t| t.region == region).collect();
        let count = |state| tasks.iter().filter(|t| t.state == state).count() as i64;
        RegionStatus {
            region: Some(region),
            pending: count(TaskState::Pending),
            leased: count(TaskState::Leased),
            retry_wait: count(TaskState::RetryWait),
            delivered: 0,
            failed: 0,
            cancelled: 0,
            oldest_eligible: self.oldest_eligible(tasks.iter().copied(), now),
            expired_leases: tasks.iter().filter(|t| Self::expired_lease(t, now)).count() as i64,
            disabled_destinations: self
                .destinations
                .values()
                .filter(|d| d.live() && d.destination.region == region && !d.destination.enabled)
                .count() as i64,
        }
    }

    /// The whole report, one region's or every region's.
    pub(super) fn status(&self, only: Option<Region>, now: DateTime<Utc>) -> StatusReport {
        let here = |region: Region| only.is_none_or(|r| r == region);
        let destinations = || {
            self.destinations
                .values()
                .filter(|d| d.live())
                .map(|d| (d, &d.destination))
                .filter(move |(_, d)| here(d.region))
        };
        let mut paused: Vec<(DestinationId, Region, DateTime<Utc>)> = destinations()
            .filter_map(|(_, d)| {
                let until = d.paused_until.filter(|until| *until > now)?;
                Some((d.id.clone(), d.region, until))
            })
            .collect();
        // Latest end first; the map gave them by id, and the sort is stable.
        paused.sort_by_key(|p| Reverse(p.2));
        let mut refused: Vec<Refused> = destinations()
            .filter_map(|(record, d)| {
                let (why, last) = record.refused.clone()?;
                (last > now - REFUSED_RECENTLY).then(|| Refused {
                    destination: d.id.clone(),
                    region: d.region,
                    why,
                    last,
                })
            })
            .collect();
        refused.sort_by_key(|r| Reverse(r.last));
        let tasks = || self.tasks.iter().filter(move |t| here(t.region));
        let top = usize::try_from(TOP).unwrap_or(usize::MAX);
        let mut top_retry_wait = most_first(
            tasks()
                .filter(|t| t.state == TaskState::RetryWait)
                .map(|t| t.destination_id.clone()),
        );
        top_retry_wait.truncate(top);
        let limited = self
            .attempts
            .iter()
            .filter(|a| a.observed.http_status == Some(429))
            .filter(|a| a.recorded_at > now - Duration::hours(1))
            .filter_map(|a| self.by_id.get(&a.task_id).map(|&i| &self.tasks[i]))
            .filter(|t| here(t.region))
            .map(|t| t.destination_id.clone());
        let mut top_rate_limited = most_first(limited);
        top_rate_limited.truncate(top);
        let ended_since = |state: TaskState, since: DateTime<Utc>| {
            tasks().filter(move |t| t.state == state && t.finalized_at.is_some_and(|at| at > since))
        };
        let failed_last_day = || self.failure_log.between(only, now - Duration::days(1), now);
        let failures = failed_last_day().map(|f| f.reason.clone());
        let mut failures_by_destination =
            most_first(failed_last_day().map(|f| f.destination.clone()));
        failures_by_destination.truncate(top);
        let deliveries = ended_since(TaskState::Delivered, now - Duration::hours(1));
        StatusReport {
            now,
            regions: self.regions(only, now),
            paused,
            refused,
            disabled: destinations()
                .filter(|(_, d)| !d.enabled)
                .map(|(_, d)| d.clone())
                .collect(),
            top_retry_wait,
            top_rate_limited,
            failures_last_day: most_first(failures),
            failures_by_destination_last_day: failures_by_destination,
            deadline_to_delivery: Latency::of(deliveries.filter_map(lateness).collect()),
        }
    }
}

impl Reports for MemStore {
    async fn status(&self, region: Option<Region>) -> Result<StatusReport, StoreError> {
        let now = self.report_time();
        let mut state = self.state.lock();
        state.record_failures();
        Ok(state.status(region, now))
    }

    async fn region_counts(&self, region: Region) -> Result<RegionCounts, StoreError> {
        let now = self.report_time();
        let regions = self.state.lock().regions(Some(region), now);
        Ok(RegionCounts::of(now, region, regions))
    }

    async fn queue(&self, region: Region) -> Result<RegionStatus, StoreError> {
        let now = self.report_time();
        Ok(self.state.lock().queue(region, now))
    }

    async fn search_task_page(
        &self,
        region: Region,
        filter: &TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<TaskPage, StoreError> {
        Ok(self.state.lock().search(region, filter, before, limit))
    }

    async fn destination_summaries(
        &self,
        region: Region,
    ) -> Result<Vec<DestinationSummary>, StoreError> {
        let now = self.report_time();
        let mut state = self.state.lock();
        state.record_failures();
        Ok(state.summaries(region, now))
    }

    async fn activity(&self, region: Region) -> Result<Activity, StoreError> {
        let now = self.report_time();
        let mut state = self.state.lock();
        state.record_failures();
        Ok(state.activity(region, now))
    }

    async fn destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        self.read_destination_stats(id, since, until).await
    }

    async fn audit_page(
        &self,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<AuditPage, StoreError> {
        self.read_audit_page(filter, before, limit).await
    }
}
