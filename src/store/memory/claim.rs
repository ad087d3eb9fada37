//! The claim over the model: the turns and the choice of `claim_turn`,
//! each row leased by `lifecycle::lease`, a keyed row behind an earlier one
//! of its line left out (`ordering`); and when a claim could next find work.

use std::convert::Infallible;

use chrono::{DateTime, Duration, Utc};

use super::store::MemStore;

use super::state::State;
use crate::domain::{ClaimedTask, DestinationId, Region, Task, TaskState, TenantId};
use crate::store::contract::ClaimRequest;
use crate::store::rules::claim_turn::{self, Lookups, Row};
use crate::store::{rules::lifecycle, rules::next_due, rules::ordering};

impl MemStore {
    pub(super) fn claim_now(&self, request: &ClaimRequest) -> Vec<ClaimedTask> {
        if request.limit == 0 || request.per_destination_cap == 0 {
            return Vec::new();
        }
        let now = self.now();
        let mut state = self.state.lock();
        let mut open: Vec<DestinationId> = state
            .destinations
            .values()
            .map(|d| &d.destination)
            .filter(|d| {
                d.region == request.region && d.enabled && d.paused_until.is_none_or(|p| p <= now)
            })
            .map(|d| d.id.clone())
            .collect();
        open.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        let mut lookups = Model {
            tasks: &state.tasks,
            request,
            now,
        };
        let Ok(chosen) = claim_turn::choose(request, &open, &mut lookups);
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
        let since = now - next_due::JUST_MISSED;
        let state = self.state.lock();
        let earliest_of = |d: &crate::domain::Destination| {
            let mut upcoming = next_due::Upcoming {
                paused_until: d.paused_until,
                first_unleased: None,
                next_unleased: None,
                next_lease_end: None,
            };
            let keep_min = |slot: &mut Option<DateTime<Utc>>, at| {
                *slot = Some(slot.map_or(at, |s: DateTime<Utc>| s.min(at)));
            };
            // A row whose change waits for its attempt is never claimed.
            let rows = state.tasks.iter().filter(|t| {
                t.destination_id == d.id
                    && t.region == region
                    && !t.state.is_terminal()
                    && t.waiting_change.is_none()
            });
            for t in rows {
                match t.state {
                    TaskState::Leased => {
                        if let Some(end) = lifecycle::claimable_from(t).filter(|at| *at > since) {
                            keep_min(&mut upcoming.next_lease_end, end);
                        }
                    }
                    _ => {
                        keep_min(&mut upcoming.first_unleased, t.available_at);
                        if t.available_at > since {
                            keep_min(&mut upcoming.next_unleased, t.available_at);
                        }
                    }
                }
            }
            next_due::earliest(now, upcoming)
        };
        state
            .destinations
            .values()
            .map(|r| &r.destination)
            .filter(|d| d.region == region && d.enabled)
            .filter_map(earliest_of)
            .min()
            .map(|at| (at - now).max(Duration::zero()))
    }
}

/// The model's rows as the claim's lookups see them; a row's key is its
/// place in the model, which is the order rows were inserted.
struct Model<'a> {
    tasks: &'a [Task],
    request: &'a ClaimRequest,
    now: DateTime<Utc>,
}

impl Model<'_> {
    fn live_at<'t>(
        &'t self,
        destination: &'t DestinationId,
    ) -> impl Iterator<Item = (usize, &'t Task)> + 't {
        self.tasks.iter().enumerate().filter(move |(_, t)| {
            t.destination_id == *destination
                && t.region == self.request.region
                && !t.state.is_terminal()
        })
    }
}

impl Lookups<usize> for Model<'_> {
    type Error = Infallible;

    fn has_work(&mut self, destination: &DestinationId) -> Result<bool, Infallible> {
        Ok(self.live_at(destination).any(|(_, t)| {
            lifecycle::claimable_since(t, self.now).is_some() && !ordering::waits(t, self.tasks)
        }))
    }

    fn next_tenant(
        &mut self,
        destination: &DestinationId,
        after: &str,
    ) -> Result<Option<TenantId>, Infallible> {
        Ok(self
            .live_at(destination)
            .map(|(_, t)| &t.tenant_id)
            .filter(|tenant| tenant.as_str() > after)
            .min_by(|a, b| a.as_str().cmp(b.as_str()))
            .cloned())
    }

    fn rows(
        &mut self,
        destination: &DestinationId,
        tenant: &TenantId,
        limit: usize,
    ) -> Result<Vec<Row<usize>>, Infallible> {
        let mut rows: Vec<Row<usize>> = self
            .live_at(destination)
            .filter(|(_, t)| t.tenant_id == *tenant && !ordering::waits(t, self.tasks))
            .filter_map(|(i, t)| {
                lifecycle::claimable_since(t, self.now).map(|due_at| Row {
                    available_at: t.available_at,
                    due_at,
                    key: i,
                })
            })
            .collect();
        rows.sort_by_key(|r| (r.available_at, r.key));
        rows.truncate(limit);
        Ok(rows)
    }
}
