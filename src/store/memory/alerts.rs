//! The alert check in the model (`store::Alerts`): the same reads as the
//! other stores, as filters over the model's tasks, handed to
//! `rules::alerts::fold` under the model's one lock.
//!
//! PostgreSQL and SQLite record a task's move into `failed` by a trigger
//! as it happens; the model has no trigger, so it records the moves it
//! has not seen (a failed task whose `finalized_at` it has not recorded)
//! at each check, at each report that reads them, and before anything can
//! take a task out of `failed` (a replay, a bulk replay, a move, a cancel
//! or an erase, the settle of a change that waited for an attempt,
//! retention): no move is missed, as none can be undone unseen. A task
//! imported as failed is recorded as seen, as an insert fires no trigger.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::failure_log::LoggedFailure;
use super::state::State;
use super::store::MemStore;
use crate::domain::{Destination, DestinationEvent, Region, Task, TaskId, TaskState};
use crate::store::contract::{AlertCheck, Alerts, AlertsChecked, StoreError};
use crate::store::rules::alerts::{self, FailedTask, Found, Kept};

impl State {
    /// Records every move into `failed` not recorded yet, to announce and
    /// in the failure log.
    pub(super) fn record_failures(&mut self) {
        let records = &mut self.alert_records;
        let log = &mut self.failure_log;
        for t in &self.tasks {
            let (TaskState::Failed, Some(at)) = (t.state, t.finalized_at) else {
                continue;
            };
            if records.recorded.get(&t.id) == Some(&at) {
                continue;
            }
            records.recorded.insert(t.id, at);
            log.record(LoggedFailure {
                task_id: t.id,
                failed_at: at,
                region: t.region,
                destination: t.destination_id.clone(),
                reason: t.failure_reason.clone().unwrap_or_else(|| "unknown".into()),
            });
            records.failures.push((
                t.region,
                FailedTask {
                    task_id: t.id,
                    failed_at: at,
                    destination: t.destination_id.clone(),
                    tenant_id: t.tenant_id.as_str().to_owned(),
                    reminder_id: t.reminder_id.as_str().to_owned(),
                    reason: t.failure_reason.clone().unwrap_or_default(),
                    attempts: t.attempt_count,
                    not_before: t.not_before,
                },
            ));
        }
    }

    /// Takes a task that arrives failed (an import) as recorded.
    pub(super) fn failure_seen(&mut self, t: &Task) {
        if let (TaskState::Failed, Some(at)) = (t.state, t.finalized_at) {
            self.alert_records.recorded.insert(t.id, at);
        }
    }

    fn kept(&self, region: Region) -> Kept {
        let r = &self.alert_records;
        Kept {
            destinations: r
                .destinations
                .iter()
                .filter(|(_, (of, _))| *of == region)
                .map(|(id, (_, a))| (id.clone(), a.clone()))
                .collect(),
            windows: r
                .windows
                .iter()
                .filter(|(_, (of, _))| *of == region)
                .map(|(key, (_, w))| (key.clone(), w.clone()))
                .collect(),
        }
    }

    fn check_alerts_now(
        &mut self,
        check: &AlertCheck,
        now: DateTime<Utc>,
        rule: crate::policy::DisableRule,
    ) -> AlertsChecked {
        self.record_failures();
        let region = check.region;
        let dests: Vec<Destination> = self
            .destinations
            .values()
            .filter(|d| d.destination.region == region)
            .map(|d| d.destination.clone())
            .collect();
        let kept = self.kept(region);
        let scans = alerts::late_scans(check, now, &dests);
        let batch = usize::try_from(check.batch).unwrap_or(usize::MAX);

        let mut failed: Vec<FailedTask> = self
            .alert_records
            .failures
            .iter()
            .filter(|(of, _)| *of == region)
            .map(|(_, f)| f.clone())
            .collect();
        failed.sort_by_key(|f| (f.failed_at, f.task_id.0));
        failed.truncate(batch);

        let mut late = Vec::new();
        for s in &scans {
            let mut of_one: Vec<&Task> = self
                .tasks
                .iter()
                .filter(|t| {
                    t.destination_id == s.destination
                        && alerts::live(t)
                        && !self.alert_records.late_seen.contains(&t.id)
                        && t.not_before <= s.cutoff
                })
                .collect();
            of_one.sort_by_key(|t| (t.not_before, t.id.0));
            late.extend(of_one.into_iter().take(batch).cloned());
        }

        let mut horizon = Vec::new();
        if check.announce {
            let until = alerts::horizon_until(check, now);
            let mut due: Vec<&Task> = self
                .tasks
                .iter()
                .filter(|t| {
                    t.region == region
                        && alerts::live(t)
                        && !self.alert_records.horizon_seen.contains(&t.id)
                        && t.retry_horizon_at <= until
                })
                .collect();
            due.sort_by_key(|t| (t.retry_horizon_at, t.id.0));
            horizon.extend(due.into_iter().take(batch).cloned());
        }

        let found = Found {
            failed,
            late,
            horizon,
        };
        let plan = alerts::fold(check, now, rule, &dests, &scans, kept, found);

        let records = &mut self.alert_records;
        records
            .failures
            .retain(|(_, f)| !plan.failures_done.contains(&(f.task_id, f.failed_at)));
        for e in &plan.events {
            if !self.events.iter().any(|known| known.id == e.id) {
                self.events.push(e.clone());
            }
        }
        for (d, a) in &plan.destinations {
            records.destinations.insert(d.clone(), (region, a.clone()));
        }
        for (d, kind, w) in &plan.windows {
            records
                .windows
                .insert((d.clone(), *kind), (region, w.clone()));
        }
        // Read and marked under one lock: nothing moved in between.
        records
            .late_seen
            .extend(plan.late_seen.iter().map(|(id, _)| *id));
        records
            .horizon_seen
            .extend(plan.horizon_seen.iter().map(|(id, _)| *id));
        // A mark of a task that ended is dropped with its queue row on the
        // databases; here, at the next check.
        let live: HashSet<TaskId> = self
            .tasks
            .iter()
            .filter(|t| alerts::live(t))
            .map(|t| t.id)
            .collect();
        records.late_seen.retain(|id| live.contains(id));
        records.horizon_seen.retain(|id| live.contains(id));
        plan.checked
    }
}

impl Alerts for MemStore {
    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        let now = self.now();
        let rule = self.disable_rule;
        Ok(self.state.lock().check_alerts_now(check, now, rule))
    }

    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        self.events(region, limit)
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        self.forget_events(ids)
    }
}
