//! What a wake-up says (see `database::notify`, which hears them): every
//! store sends them when work is scheduled, a destination is paused, or an
//! operator's change reaches a task in flight.

use crate::domain::{DestinationId, Region, TaskId};

/// What a notification said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wakeup {
    /// Work was scheduled for this region.
    DueWork(Region),
    /// This destination changed (it was paused).
    Destination(DestinationId),
    /// An operator's change (a cancel, a move, an erasure) now waits for
    /// this task's attempt: a process holding it unsent hands it back.
    TaskChanged(TaskId),
}
