//! What a wake-up says (see `database::notify`, which hears them): every
//! store sends them when work is scheduled or a destination is paused.

use crate::domain::{DestinationId, Region};

/// What a notification said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wakeup {
    /// Work was scheduled for this region.
    DueWork(Region),
    /// This destination changed (it was paused).
    Destination(DestinationId),
}
