//! `Destinations`: an operator's changes to a destination after it was
//! registered: its URL, its own limits, timeout, retry policy, lateness
//! allowance, disable thresholds and headers, and its deletion.

use std::future::Future;

use crate::domain::{Destination, DestinationChange, DestinationId};
use crate::store::console::{NewReplayJob, ReplayJob};
use crate::store::StoreError;

pub trait Destinations: Sync {
    /// Applies the change in one transaction and tells every process of
    /// the region when it commits (their throttles and senders read the
    /// destination again). Answers the destination as it now is; one that
    /// does not exist, or was deleted, is `NotFound`. The change is
    /// checked first (`Invalid`, naming the field); a secret header given
    /// without its value keeps the value stored under its name.
    fn update_destination(
        &self,
        id: &DestinationId,
        change: DestinationChange,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

    /// Deletes the destination: it stays as a disabled tombstone that no
    /// read shows (so the tasks that ended under it keep their history
    /// until retention prunes them) and refuses new tasks; registering its
    /// id again brings it back as new. One with live tasks (pending,
    /// leased, waiting to retry) is `InUse`, unless `cancel` is given: then
    /// that job, recorded in the same transaction, cancels them (a task in
    /// flight after its attempt), and no claim takes them meanwhile.
    fn delete_destination(
        &self,
        id: &DestinationId,
        cancel: Option<NewReplayJob>,
    ) -> impl Future<Output = Result<Deleted, StoreError>> + Send;
}

/// What a deletion did.
#[derive(Debug, Clone, PartialEq)]
pub struct Deleted {
    /// The destination as it was before.
    pub destination: Destination,
    /// Its live tasks when it was deleted.
    pub live_tasks: u64,
    /// The job cancelling them, when asked.
    pub cancel_job: Option<ReplayJob>,
}
