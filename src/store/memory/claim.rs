//! The claim over the model: the turn and the choice of `claim_turn`, each
//! row leased by `lifecycle::lease`; a keyed row behind an earlier one of
//! its line is left (`ordering`); and when a claim could next find work.

use chrono::Duration;

use super::{MemStore, State};
use crate::domain::{ClaimedTask, DestinationId, Region};
use crate::store::claim_turn::{self, Work};
use crate::store::{lifecycle, ordering, ClaimRequest};

impl MemStore {
    pub(super) fn claim_now(&self, request: &ClaimRequest) -> Vec<ClaimedTask> {
        if request.limit == 0 || request.per_destination_cap == 0 {
            return Vec::new();
        }
        let now = self.now();
        let mut state = self.state.lock();
        let open: Vec<&DestinationId> = state
            .destinations
            .values()
            .map(|d| &d.destination)
            .filter(|d| {
                d.region == request.region && d.enabled && d.paused_until.is_none_or(|p| p <= now)
            })
            .map(|d| &d.id)
            .collect();
        let mut work: Vec<Work<usize>> = Vec::new();
        for destination in claim_turn::turn(request, open) {
            if work.len() == request.limit as usize {
                break;
            }
            let mut rows = Work::default();
            for (i, t) in state.tasks.iter().enumerate() {
                if t.destination_id != destination || t.region != request.region {
                    continue;
                }
                if ordering::waits(t, &state.tasks) {
                    continue;
                }
                if let Some(at) = lifecycle::claimable_since(t, now) {
                    if lifecycle::lease_expired(t, now) {
                        rows.expired.push((at, i));
                    } else {
                        rows.due.push((at, i));
                    }
                }
            }
            if !rows.is_empty() {
                work.push(rows);
            }
        }
        let chosen = claim_turn::choose(request, work);
        let mut claimed = Vec::with_capacity(chosen.len());
        for i in chosen {
            state.next_token += 1;
            let token = state.next_token;
            let State {
                tasks, attempts, ..
            } = &mut *state;
            let (one, lost) = lifecycle::lease(
                &mut tasks[i],
                token,
                &request.lease_owner,
                request.lease,
                now,
            );
            attempts.extend(lost);
            claimed.push(one);
        }
        claimed
    }

    pub(super) fn next_due_now(&self, region: Region) -> Option<Duration> {
        let now = self.now();
        let state = self.state.lock();
        state
            .tasks
            .iter()
            .filter(|t| t.region == region)
            .filter_map(|t| {
                let destination = &state.destinations.get(&t.destination_id)?.destination;
                let from = lifecycle::claimable_from(t)?;
                destination
                    .enabled
                    .then(|| destination.paused_until.map_or(from, |p| from.max(p)))
            })
            .min()
            .map(|at| (at - now).max(Duration::zero()))
    }
}
