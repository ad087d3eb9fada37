//! Each destination's hours in the model: the finish counts every applied
//! attempt into its destination's hour under the same lock as the attempt
//! itself, as the databases do in the finish's transaction.

use chrono::{DateTime, Duration, Utc};

use super::store::MemStore;

use crate::domain::{hour_of, DestinationHour, DestinationId, PruneRequest, Region};
use crate::store::contract::Finish;
use crate::store::contract::StoreError;

impl MemStore {
    /// Counts an applied finish into its task's destination's hour.
    pub(super) fn count_hour(&self, one: &Finish) {
        let now = self.now();
        let mut state = self.state.lock();
        let Some(task) = state
            .by_id
            .get(&one.lease.task_id)
            .map(|i| &state.tasks[*i])
        else {
            return;
        };
        let (id, attempt, not_before) = (
            task.destination_id.clone(),
            task.attempt_count,
            task.not_before,
        );
        state
            .hours
            .entry((id, hour_of(now)))
            .or_insert_with(|| DestinationHour::empty_at(now))
            .count(&one.decision.record, attempt, not_before);
    }
}

impl MemStore {
    pub(in crate::store) async fn read_destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        let from = (id.clone(), hour_of(since));
        let state = self.state.lock();
        Ok(state
            .hours
            .range(from..)
            .take_while(|((of, hour), _)| of == id && *hour < until)
            .map(|(_, hour)| hour.clone())
            .collect())
    }

    pub(in crate::store) async fn prune_stats(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        let older_than = older_than.min(Duration::days(PruneRequest::MAX_AGE_DAYS));
        // An hour goes once its end is older than the age.
        let cutoff = self.now() - older_than - Duration::hours(1);
        let mut state = self.state.lock();
        let state = &mut *state;
        state.record_failures();
        state.failure_log.prune(region, cutoff + Duration::hours(1));
        let before = state.hours.len();
        let destinations = &state.destinations;
        state.hours.retain(|(id, hour), _| {
            // A destination that no longer exists is every region's.
            let of_region = destinations
                .get(id)
                .is_none_or(|d| region.is_none_or(|r| d.destination.region == r));
            !(of_region && *hour < cutoff)
        });
        Ok((before - state.hours.len()) as u64)
    }
}
