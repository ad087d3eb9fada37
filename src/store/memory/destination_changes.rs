//! An operator's change of a destination, and its deletion, in the model.

use crate::domain::{Destination, DestinationChange, DestinationId};
use crate::store::console::NewReplayJob;
use crate::store::{Deleted, Destinations, StoreError};

use super::MemStore;

impl Destinations for MemStore {
    async fn update_destination(
        &self,
        _id: &DestinationId,
        _change: DestinationChange,
    ) -> Result<Destination, StoreError> {
        Err(StoreError::Thread("not built yet".into()))
    }

    async fn delete_destination(
        &self,
        _id: &DestinationId,
        _cancel: Option<NewReplayJob>,
    ) -> Result<Deleted, StoreError> {
        Err(StoreError::Thread("not built yet".into()))
    }
}
