//! What the model keeps for its alert check between checks (the other
//! stores keep it in tables): the failures recorded and not yet announced,
//! each destination's streaks and windows, and the tasks already announced
//! late or past their horizon. The check itself is in `alerts`.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};

use crate::domain::{DestinationId, EventKind, Region, Task, TaskId};
use crate::store::rules::alerts::{DestinationAlerts, FailedTask, Window};

/// What the model keeps for the alert check.
#[derive(Debug, Clone, Default)]
pub(super) struct AlertRecords {
    /// Each task's last move into `failed` recorded (its `finalized_at`).
    pub(super) recorded: HashMap<TaskId, DateTime<Utc>>,
    /// Recorded moves not yet announced, with their region.
    pub(super) failures: Vec<(Region, FailedTask)>,
    pub(super) destinations: BTreeMap<DestinationId, (Region, DestinationAlerts)>,
    pub(super) windows: BTreeMap<(DestinationId, EventKind), (Region, Window)>,
    /// Tasks announced late.
    pub(super) late_seen: HashSet<TaskId>,
    /// Tasks whose horizon was announced.
    pub(super) horizon_seen: HashSet<TaskId>,
}

impl AlertRecords {
    /// A change of a task's row (`before` to `after`): a move of its
    /// deadline clears its late mark, a move of its horizon the other, and
    /// a task that comes back to life has neither, as the databases'
    /// triggers do.
    pub(super) fn moved(&mut self, before: &Task, after: &Task) {
        let revived = before.state.is_terminal() && !after.state.is_terminal();
        if revived || before.not_before != after.not_before {
            self.late_seen.remove(&after.id);
        }
        if revived || before.retry_horizon_at != after.retry_horizon_at {
            self.horizon_seen.remove(&after.id);
        }
    }
}
