//! Which rows a claim takes, written once for the stores that choose in
//! code (the in-memory model and SQLite); PostgreSQL's claim statement
//! (`claim.rs`) makes the same choice in SQL.
//!
//! A claim takes a turn over the region's destinations, starting after the
//! one the previous claim ended at and wrapping round, and stops at the
//! first `limit` destinations with work. Each of those gets an even share
//! of the claim (at most `per_destination_cap`) from its due rows and from
//! its expired leases, oldest first; then the rows go round-robin by turn
//! up to `limit`.

use chrono::{DateTime, Utc};

use super::ClaimRequest;
use crate::domain::DestinationId;

/// The destinations of a claim's turn, in order: those after
/// `resume_after`, then the rest, leaving out the ones the request skips.
/// `ids` must come sorted in byte order (PostgreSQL's `COLLATE "C"`).
pub(super) fn turn<'a>(
    request: &ClaimRequest,
    ids: impl IntoIterator<Item = &'a DestinationId>,
) -> Vec<DestinationId> {
    let after = request.resume_after.as_ref().map_or("", |d| d.as_str());
    let (later, earlier): (Vec<DestinationId>, Vec<DestinationId>) = ids
        .into_iter()
        .filter(|id| !request.skip.contains(id))
        .cloned()
        .partition(|id| id.as_str() > after);
    later.into_iter().chain(earlier).collect()
}

/// One destination's claimable rows: when each became claimable, and a key
/// that orders rows of equal age the way they were inserted.
#[derive(Debug, Default)]
pub(super) struct Work<K> {
    pub due: Vec<(DateTime<Utc>, K)>,
    pub expired: Vec<(DateTime<Utc>, K)>,
}

impl<K> Work<K> {
    pub fn is_empty(&self) -> bool {
        self.due.is_empty() && self.expired.is_empty()
    }
}

/// The rows to lease, in the order the claim leases them, from the work of
/// the destinations in turn order (only those with work, at most `limit`).
pub(super) fn choose<K: Ord + Copy>(request: &ClaimRequest, work: Vec<Work<K>>) -> Vec<K> {
    let limit = request.limit as usize;
    let cap = request.per_destination_cap as usize;
    let share = limit.div_ceil(work.len().max(1)).clamp(1, cap.max(1));
    let mut chosen: Vec<(usize, DateTime<Utc>, K)> = Vec::new();
    for Work {
        mut due,
        mut expired,
    } in work
    {
        due.sort();
        expired.sort();
        let mut candidates: Vec<_> = due
            .into_iter()
            .take(share)
            .chain(expired.into_iter().take(share))
            .collect();
        candidates.sort();
        for (round, (at, key)) in candidates.into_iter().take(cap).enumerate() {
            chosen.push((round, at, key));
        }
    }
    chosen.sort();
    chosen.truncate(limit);
    chosen.into_iter().map(|(_, _, key)| key).collect()
}
