//! `Destinations` on PostgreSQL: each call into the file that holds its
//! statements (`destination_rows`, `secrets`, `send_targets`,
//! `destination_changes`, `refusals`).
//!
//! # Layout
//! - `destination_rows`: a destination's own row: add (and revive),
//!   read, pause, disable, enable, the lock an operator's change takes.
//! - `destination_changes`: an operator's change of a destination, its
//!   deletion; `headers`: its custom header rows.
//! - `secrets`: signing secrets: add, rotate, list, the valid ones of
//!   many destinations.
//! - `send_targets`: destinations read for their sends, many at once.
//! - `refusals`: destinations the address policy refuses.

pub(super) mod destination_changes;
pub(super) mod destination_rows;
pub(super) mod headers;
pub(super) mod refusals;
pub(super) mod secrets;
pub(super) mod send_targets;

use crate::domain::{
    Destination, DestinationChange, DestinationId, NewDestination, Rotation, SendTarget,
    SigningSecret,
};
use crate::store::contract::{Deleted, Destinations, NewJob, StoreError};
use crate::store::postgres::store::PgStore;
use chrono::{DateTime, Duration, Utc};

impl Destinations for PgStore {
    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        destination_rows::add_destination(self, new).await
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        destination_rows::destination(self, id).await
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        send_targets::send_targets(self, ids).await
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        secrets::rotate(self, id, rotation).await
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        secrets::list(self, id).await
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        destination_rows::pause_destination(self, id, pause).await
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        refusals::mark_refused(self, id, why).await
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        destination_rows::disable(self, id, reason).await
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        destination_rows::enable(self, id).await
    }

    async fn update_destination(
        &self,
        id: &DestinationId,
        change: DestinationChange,
    ) -> Result<Destination, StoreError> {
        destination_changes::update(self, id, change).await
    }

    async fn delete_destination(
        &self,
        id: &DestinationId,
        cancel: Option<NewJob>,
    ) -> Result<Deleted, StoreError> {
        destination_changes::delete(self, id, cancel).await
    }
}
