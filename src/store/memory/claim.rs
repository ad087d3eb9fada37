//! The claim over the model, mirroring the SQL: a turn over the region's
//! destinations from where the last claim ended, the first `limit` with
//! work, each its share of due rows and of expired leases, then
//! round-robin by turn up to the limit.

use chrono::{DateTime, Duration, Utc};

use super::{attempt, MemStore, State};
use crate::domain::{AttemptOutcome, AttemptRecord, ClaimedTask, DestinationId, Lease, TaskState};
use crate::store::ClaimRequest;

/// A destination's claimable rows: when each became due, and where it is.
type Rows = Vec<(DateTime<Utc>, usize)>;

impl MemStore {
    pub(super) fn claim_now(&self, request: &ClaimRequest) -> Vec<ClaimedTask> {
        if request.limit == 0 || request.per_destination_cap == 0 {
            return Vec::new();
        }
        let now = self.now();
        let limit = request.limit as usize;
        let cap = request.per_destination_cap as usize;
        let mut state = self.state.lock();
        let after = request.resume_after.as_ref().map_or("", |d| d.as_str());
        let (later, earlier): (Vec<DestinationId>, Vec<DestinationId>) = state
            .destinations
            .values()
            .filter(|d| {
                let d = &d.destination;
                d.region == request.region
                    && d.enabled
                    && d.paused_until.is_none_or(|p| p <= now)
                    && !request.skip.contains(&d.id)
            })
            .map(|d| d.destination.id.clone())
            .partition(|id| id.as_str() > after);
        // The turn starts after where the last claim ended and wraps round;
        // it stops at `limit` destinations with work, as the SQL claim does.
        let mut work: Vec<(Rows, Rows)> = Vec::new();
        for destination in later.iter().chain(&earlier) {
            if work.len() == limit {
                break;
            }
            let mut due: Rows = Vec::new();
            let mut expired: Rows = Vec::new();
            for (i, t) in state.tasks.iter().enumerate() {
                if &t.destination_id != destination || t.region != request.region {
                    continue;
                }
                if let Some(at) = State::due(t, now) {
                    if t.state == TaskState::Leased {
                        expired.push((at, i));
                    } else {
                        due.push((at, i));
                    }
                }
            }
            if !(due.is_empty() && expired.is_empty()) {
                work.push((due, expired));
            }
        }
        // Each destination's share of the claim, at most `cap`; then
        // round-robin by turn.
        let share = limit.div_ceil(work.len().max(1)).clamp(1, cap);
        let mut chosen: Vec<(usize, DateTime<Utc>, usize)> = Vec::new();
        for (mut due, mut expired) in work {
            due.sort();
            expired.sort();
            let mut candidates: Vec<_> = due
                .into_iter()
                .take(share)
                .chain(expired.into_iter().take(share))
                .collect();
            candidates.sort();
            for (turn, (at, i)) in candidates.into_iter().take(cap).enumerate() {
                chosen.push((turn, at, i));
            }
        }
        chosen.sort();
        chosen.truncate(limit);

        let mut claimed = Vec::with_capacity(chosen.len());
        for (_, _, i) in chosen {
            state.next_token += 1;
            let token = state.next_token;
            let prior = state.tasks[i].clone();
            let reclaimed = prior.state == TaskState::Leased;
            if reclaimed {
                let lease = Lease {
                    task_id: prior.id,
                    token: prior.lease_token.unwrap_or_default(),
                    owner: prior.lease_owner.clone().unwrap_or_default(),
                    attempt: prior.attempt_count,
                };
                state.attempts.push(attempt(
                    &lease,
                    AttemptOutcome::Abandoned,
                    &AttemptRecord::default(),
                    None,
                    now,
                    prior.attempt_count,
                ));
            }
            let expires = now + request.lease.max(Duration::milliseconds(1));
            let task = &mut state.tasks[i];
            task.state = TaskState::Leased;
            task.lease_token = Some(token);
            task.lease_owner = Some(request.consumer.clone());
            task.lease_expires_at = Some(expires);
            task.attempt_count += 1;
            task.updated_at = now;
            claimed.push(ClaimedTask {
                task: task.clone(),
                lease_token: token,
                lease_expires_at: expires,
                reclaimed,
                payload: None,
            });
        }
        claimed
    }
}
