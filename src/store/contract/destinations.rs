//! `Destinations`: the receivers tasks go to: registration and reads (the
//! send's read of many at once among them), signing secrets and their
//! rotation, pauses, disabling and enabling, and an operator's changes
//! after registration (URL, limits, timeout, retry policy, lateness
//! allowance, disable thresholds, headers) and deletion.

use std::future::Future;

use chrono::{DateTime, Duration, Utc};

use super::error::StoreError;
use crate::domain::{
    Destination, DestinationChange, DestinationId, NewDestination, Rotation, SendTarget,
    SigningSecret,
};

use super::jobs::Job;
use super::jobs::NewJob;

pub trait Destinations: Sync {
    /// Registers a destination; the same registration again is a no-op,
    /// the same id with other settings is a `Conflict`.
    fn add_destination(
        &self,
        new: NewDestination,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

    fn destination(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Option<Destination>, StoreError>> + Send;

    /// The destination with its valid secrets and what is left of its pause, read
    /// right before a request.
    fn send_target(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Option<SendTarget>, StoreError>> + Send {
        let ids = [id.clone()];
        async move { Ok(self.send_targets(&ids).await?.pop().flatten()) }
    }

    /// [`Destinations::send_target`] for many destinations at once, read together:
    /// the answers come back in order, `None` for a destination that does
    /// not exist.
    fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> impl Future<Output = Result<Vec<Option<SendTarget>>, StoreError>> + Send;

    /// Adds the rotation's secret to the destination and ends every secret
    /// valid until now at the rotation's `old_expires_at` (a secret that
    /// ends sooner keeps its end), all in one transaction; the new secret
    /// has no end. Answers the new secret (without its value); a
    /// destination that does not exist is `NotFound`.
    fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> impl Future<Output = Result<SigningSecret, StoreError>> + Send;

    /// The destination's secrets, ended ones included, oldest first,
    /// without their values; a destination that does not exist is
    /// `NotFound`.
    fn signing_secrets(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Vec<SigningSecret>, StoreError>> + Send;

    /// Holds every task of the destination for `pause` from the store's
    /// now (its clock, not the caller's); an existing later pause wins.
    /// Returns the pause now in force.
    fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> impl Future<Output = Result<DateTime<Utc>, StoreError>> + Send;

    /// Records why the address policy refuses `id`, now (`remit status`
    /// lists it).
    fn mark_refused(
        &self,
        id: &DestinationId,
        why: String,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Disables a destination by hand (`reason`, or `manual`): its tasks
    /// wait, unsent, until it is enabled or their horizon passes. One
    /// already disabled keeps its reason and time. `NotFound` when there
    /// is no such destination.
    fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

    /// Enables a destination, clearing its failure streak and the reason
    /// it was disabled, and wakes the region's claimers.
    fn enable_destination(
        &self,
        id: &DestinationId,
    ) -> impl Future<Output = Result<Destination, StoreError>> + Send;

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
        cancel: Option<NewJob>,
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
    pub cancel_job: Option<Job>,
}
