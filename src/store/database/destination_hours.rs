//! [`DestinationHours`] on `Database`: each call goes to whichever backend
//! this is, unchanged.

use chrono::{DateTime, Duration, Utc};

use super::Database;
use crate::domain::{DestinationHour, DestinationId, Region};
use crate::store::{DestinationHours, StoreError};

impl DestinationHours for Database {
    async fn destination_hours(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        on_store!(self, s => DestinationHours::destination_hours(s, id, since, until).await)
    }

    async fn prune_destination_hours(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        on_store!(self, s => DestinationHours::prune_destination_hours(s, region, older_than).await)
    }
}
