//! A job's columns as every store reads them back (SQLite turns its
//! integers into instants first), and the job they make.

use chrono::{DateTime, Duration, Utc};

use super::columns::{corrupt, region};
use crate::domain::{DestinationId, ReminderId, TaskId, TenantId};
use crate::store::contract::{Job, JobAction, JobFilter, StoreError};

/// A job's columns as either store reads them.
pub(crate) struct JobColumns {
    pub id: uuid::Uuid,
    pub region: String,
    pub action: String,
    pub tenant_id: Option<String>,
    pub reminder_id: Option<String>,
    pub destination_id: Option<String>,
    pub failure_reason: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    pub requested_by: String,
    pub horizon_seconds: i64,
    pub created_at: DateTime<Utc>,
    pub replayed: i64,
    pub cursor: Option<uuid::Uuid>,
    pub finished_at: Option<DateTime<Utc>>,
}

impl TryFrom<JobColumns> for Job {
    type Error = StoreError;

    fn try_from(c: JobColumns) -> Result<Self, Self::Error> {
        Ok(Job {
            id: c.id,
            region: region("replay_jobs.region", &c.region)?,
            action: JobAction::from_label(&c.action).ok_or_else(|| {
                corrupt(
                    "replay_jobs.action",
                    format!("{:?} is not replay or cancel", c.action),
                )
            })?,
            filter: JobFilter {
                tenant: c
                    .tenant_id
                    .map(|t| TenantId::new(&t).map_err(|e| corrupt("replay_jobs.tenant_id", e)))
                    .transpose()?,
                reminder: c
                    .reminder_id
                    .map(|r| ReminderId::new(&r).map_err(|e| corrupt("replay_jobs.reminder_id", e)))
                    .transpose()?,
                destination: c
                    .destination_id
                    .map(|d| {
                        DestinationId::new(&d).map_err(|e| corrupt("replay_jobs.destination_id", e))
                    })
                    .transpose()?,
                reason: c.failure_reason,
                from: c.from,
                until: c.until,
            },
            requested_by: c.requested_by,
            horizon: Duration::seconds(c.horizon_seconds),
            created_at: c.created_at,
            replayed: c.replayed,
            cursor: c.cursor.map(TaskId),
            finished_at: c.finished_at,
        })
    }
}
