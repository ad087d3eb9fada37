//! `DestinationHours`: each destination's health over time, one row per
//! destination and hour, kept by the finish (`Leases::finish_many` counts
//! every attempt it applies into its destination's hour in the same
//! transaction; `domain::DestinationHour` says what counts where), read by
//! the API and the console, and pruned by the Pruner.

use std::future::Future;

use chrono::{DateTime, Duration, Utc};

use crate::domain::{DestinationHour, DestinationId, Region};
use crate::store::StoreError;

pub trait DestinationHours: Sync {
    /// The hours of `id` that start at or after the hour holding `since`
    /// and before `until`, oldest first. An hour with no counted attempt
    /// has no row and is absent; so is every hour of a destination that
    /// does not exist.
    fn destination_hours(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> impl Future<Output = Result<Vec<DestinationHour>, StoreError>> + Send;

    /// Deletes the hours that ended more than `older_than` before the
    /// store's now (an hour starting at `h` goes once `h + 1 hour` is
    /// older), of the region's destinations or of every region's, and
    /// those of destinations that no longer exist. Answers how many it
    /// deleted. A store that keeps an hour in several rows (PostgreSQL's
    /// slots) folds each hour that has ended into one first. The failure
    /// log the reports read (`task_failures`) is kept as long: its entries
    /// older than `older_than` go too (and are not counted in the answer).
    fn prune_destination_hours(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
