//! `Upkeep`: what keeps a database in shape while nothing asks: the
//! reconciliation checks, retention, the settling of disabled
//! destinations' tasks past their horizon, and the liveness ping.

use std::future::Future;

use crate::domain::{PruneReport, PruneRequest, ReconcileReport, ReconcileRequest, Region};
use crate::store::StoreError;

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
}
