//! The retry horizon a task gets when its request names none: its
//! destination's own (`retry_horizon_seconds`), else the runtime's. A
//! destination's is read at most once a second per process, so scheduling
//! costs no read per task; a change reaches new tasks within that second.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use remit::domain::{DestinationId, NewTask};
use remit::store::{Store, StoreError};

/// How long a destination's horizon is trusted once read.
const FRESH_FOR: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
pub struct Horizons {
    read: Mutex<HashMap<DestinationId, (Option<i64>, Instant)>>,
}

impl Horizons {
    /// Gives each task whose request named no horizon (`asked` false) its
    /// destination's own, where it has one. A destination that does not
    /// exist is left to the schedule to refuse.
    pub async fn apply<S: Store>(
        &self,
        store: &S,
        tasks: &mut [(NewTask, bool)],
    ) -> Result<(), StoreError> {
        for (task, asked) in tasks.iter_mut() {
            if *asked {
                continue;
            }
            if let Some(seconds) = self.of(store, &task.destination_id).await? {
                task.retry_horizon = chrono::Duration::seconds(seconds);
            }
        }
        Ok(())
    }

    async fn of<S: Store>(&self, store: &S, id: &DestinationId) -> Result<Option<i64>, StoreError> {
        if let Some((seconds, at)) = self.read.lock().get(id) {
            if at.elapsed() < FRESH_FOR {
                return Ok(*seconds);
            }
        }
        let seconds = store
            .destination(id)
            .await?
            .and_then(|d| d.settings.retry_horizon_seconds);
        let mut read = self.read.lock();
        // Bounded: a process schedules to the destinations it knows.
        if read.len() > 10_000 {
            read.retain(|_, (_, at)| at.elapsed() < FRESH_FOR);
        }
        read.insert(id.clone(), (seconds, Instant::now()));
        Ok(seconds)
    }
}
