//! `Upkeep`: what keeps a database in shape while nothing asks: the
//! reconciliation checks, retention (of ended tasks, of destinations'
//! hours and the failure log, of the audit log), the settling of disabled
//! destinations' tasks past their horizon, and the liveness ping.

use std::future::Future;

use chrono::Duration;

use super::audit::AuditScope;
use super::error::StoreError;
use crate::domain::{PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region};

pub trait Upkeep: Sync {
    /// Runs the reconciliation checks (and, when asked, hands expired
    /// leases back).
    fn reconcile(
        &self,
        request: &ReconcileRequest,
    ) -> impl Future<Output = Result<ReconcileReport, StoreError>> + Send;

    /// Deletes delivered and failed tasks that ended longer ago than
    /// `request.older_than` (on the store's clock), with their attempts and
    /// payloads, in batches of at most `request.batch_size` tasks, each in a
    /// transaction of its own, until a batch comes back short. Live tasks
    /// (pending, leased, retry_wait) are never touched. A pruned task's
    /// (tenant, reminder) may be scheduled again as a new task.
    fn prune(
        &self,
        request: &PruneRequest,
    ) -> impl Future<Output = Result<PruneReport, StoreError>> + Send;

    /// Checks that the database answers.
    fn ping(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Settles the tasks of the region's disabled destinations, up to
    /// `limit` of each kind: an expired lease (which no claim takes, since
    /// claims pass disabled destinations by) is handed back with its lost
    /// attempt logged as `abandoned`; a task not leased whose retry horizon
    /// has passed (the store's now) fails with `destination_disabled`: it
    /// could not be sent before it, and would otherwise wait forever, and
    /// an ordering line behind it moves on. Returns how many it failed.
    fn fail_disabled_past_horizon(
        &self,
        region: Region,
        limit: u32,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Deletes the destinations' hours that ended more than `older_than`
    /// before the store's now (an hour starting at `h` goes once
    /// `h + 1 hour` is older), of the region's destinations or of every
    /// region's, and those of destinations that no longer exist. Answers
    /// how many it deleted. A store that keeps an hour in several rows
    /// (PostgreSQL's slots) folds each hour that has ended into one first.
    /// The failure log the reports read (`task_failures`) is kept as long:
    /// its entries older than `older_than` go too (and are not counted in
    /// the answer).
    fn prune_destination_stats(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Deletes the audit log's entries of `scope` written longer ago than
    /// `older_than` (on the store's clock), at most `batch_size` per
    /// transaction, until a batch comes back short; answers how many went.
    /// The only way an entry leaves the log, and it leaves one of its own
    /// (`audit.prune`, as this handle acts) when it took any.
    fn prune_audit(
        &self,
        scope: AuditScope,
        older_than: Duration,
        batch_size: u32,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
