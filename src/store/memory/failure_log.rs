//! The model's failure log: every move of a task into `failed`, kept as
//! the stores' `task_failures` keeps it, so a failure replayed since still
//! counts in the reports of the hour (and the day) it happened. Recorded
//! with the failures to announce (`State::record_failures`), which every
//! read and every change that could take a task out of `failed` calls
//! first; pruned with the destinations' hours.

use chrono::{DateTime, Utc};

use crate::domain::{DestinationId, Region, TaskId};

/// One move into `failed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LoggedFailure {
    pub task_id: TaskId,
    pub failed_at: DateTime<Utc>,
    pub region: Region,
    pub destination: DestinationId,
    pub reason: String,
}

/// Every move into `failed`, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct FailureLog(Vec<LoggedFailure>);

impl FailureLog {
    pub(super) fn record(&mut self, failure: LoggedFailure) {
        self.0.push(failure);
    }

    /// The failures logged in `(since, until]`, of the region's (every
    /// region's with `None`).
    pub(super) fn between(
        &self,
        region: Option<Region>,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> impl Iterator<Item = &LoggedFailure> + Clone {
        self.0.iter().filter(move |f| {
            region.is_none_or(|r| f.region == r) && f.failed_at > since && f.failed_at <= until
        })
    }

    /// Forgets the region's (every region's) failures logged before
    /// `cutoff`.
    pub(super) fn prune(&mut self, region: Option<Region>, cutoff: DateTime<Utc>) {
        self.0
            .retain(|f| !(region.is_none_or(|r| f.region == r) && f.failed_at < cutoff));
    }
}
