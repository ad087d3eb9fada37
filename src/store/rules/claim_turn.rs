//! Which rows a claim takes, written once for the stores that choose in
//! code (the in-memory model and SQLite); PostgreSQL's claim statement
//! (`postgres/leases/claim.sql`) makes the same choice in SQL.
//!
//! A claim takes a turn over the region's destinations, starting after the
//! one the previous claim ended at and wrapping round, and stops at the
//! first `limit` destinations with work. Each of those gets an even share
//! of the claim (at most `per_destination_cap`). Within a destination the
//! share is split between its tenants in the same way: a turn over the
//! tenants with live rows there, starting after the tenant the previous
//! claim ended at, stops at the first `share` tenants with claimable rows,
//! and those take rows round-robin (every tenant's oldest row, then every
//! tenant's second oldest, ...) until the share is used. So one tenant's
//! backlog never holds up another tenant's reminders to the same
//! destination, and a tenant with nothing live there costs nothing. Then
//! the rows go round-robin across destinations up to `limit`.

use chrono::{DateTime, Utc};

use crate::domain::{DestinationId, TenantId};
use crate::store::contract::ClaimRequest;

/// One claimable row as the choice sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) struct Row<K> {
    /// The order rows of one tenant are taken in (PostgreSQL reads them
    /// through an index on it): when the row became due.
    pub available_at: DateTime<Utc>,
    /// When it became claimable: `available_at`, or for an expired lease
    /// the lease's end. Orders rows across destinations.
    pub due_at: DateTime<Utc>,
    /// Orders rows of equal age the way they were inserted.
    pub key: K,
}

/// What a store looks up while a claim chooses.
pub(in crate::store) trait Lookups<K> {
    type Error;
    /// Whether the destination has a claimable row.
    fn has_work(&mut self, destination: &DestinationId) -> Result<bool, Self::Error>;
    /// The first tenant after `after` (byte order) with a live row at the
    /// destination.
    fn next_tenant(
        &mut self,
        destination: &DestinationId,
        after: &str,
    ) -> Result<Option<TenantId>, Self::Error>;
    /// Up to `limit` of the tenant's claimable rows at the destination,
    /// ordered by `available_at`, then `key`.
    fn rows(
        &mut self,
        destination: &DestinationId,
        tenant: &TenantId,
        limit: usize,
    ) -> Result<Vec<Row<K>>, Self::Error>;
}

/// The rows to lease, in the order the claim leases them. `open` are the
/// region's destinations a claim may take from (enabled, not paused), in
/// byte order (PostgreSQL's `COLLATE "C"`).
pub(in crate::store) fn choose<K: Ord + Copy, L: Lookups<K>>(
    request: &ClaimRequest,
    open: &[DestinationId],
    lookups: &mut L,
) -> Result<Vec<K>, L::Error> {
    let limit = request.limit as usize;
    let mut with_work = Vec::new();
    for destination in turn(request, open) {
        if with_work.len() == limit {
            break;
        }
        if lookups.has_work(&destination)? {
            with_work.push(destination);
        }
    }
    let shares = shares(request, &with_work);
    let mut chosen: Vec<(usize, Row<K>)> = Vec::new();
    for (destination, share) in with_work.iter().zip(shares) {
        let tenants = tenant_turn(request, destination, share, lookups)?;
        let mut rows = pick(share, tenants);
        rows.sort_by_key(|r| (r.due_at, r.key));
        chosen.extend(rows.into_iter().enumerate());
    }
    chosen.sort_by_key(|(turn, r)| (*turn, r.due_at, r.key));
    chosen.truncate(limit);
    Ok(chosen.into_iter().map(|(_, r)| r.key).collect())
}

/// The destinations of a claim's turn, in order: those after the resume
/// point, then the rest, leaving out the ones the request skips.
fn turn(request: &ClaimRequest, ids: &[DestinationId]) -> Vec<DestinationId> {
    let after = request.destination_after();
    let (later, earlier): (Vec<DestinationId>, Vec<DestinationId>) = ids
        .iter()
        .filter(|id| !request.skip.contains(id))
        .cloned()
        .partition(|id| id.as_str() > after);
    later.into_iter().chain(earlier).collect()
}

/// Each destination's share of the claim, in turn order: the limit split as
/// evenly as it goes (the first in the turn get one more), at most the
/// destination's cap.
fn shares(request: &ClaimRequest, open: &[DestinationId]) -> Vec<usize> {
    let limit = request.limit as usize;
    if open.is_empty() {
        return Vec::new();
    }
    let (each, extra) = (limit / open.len(), limit % open.len());
    open.iter()
        .enumerate()
        .map(|(i, id)| {
            let cap = request.cap_of(id.as_str()) as usize;
            cap.min(each + usize::from(i < extra))
        })
        .collect()
}

/// The turn over the destination's tenants: those after the resume point,
/// then, wrapping round, those up to it; it stops once `share` of them
/// have claimable rows, since each of those takes at least one. Each comes
/// with up to `share` of its claimable rows, oldest first.
fn tenant_turn<K, L: Lookups<K>>(
    request: &ClaimRequest,
    destination: &DestinationId,
    share: usize,
    lookups: &mut L,
) -> Result<Vec<Vec<Row<K>>>, L::Error> {
    let after = request.tenant_after();
    let mut due = Vec::new();
    let mut wrapped = false;
    let mut next = lookups.next_tenant(destination, after)?;
    if next.is_none() {
        wrapped = true;
        next = lookups.next_tenant(destination, "")?;
    }
    while let Some(tenant) = next {
        if due.len() == share || (wrapped && tenant.as_str() > after) {
            break;
        }
        let rows = lookups.rows(destination, &tenant, share)?;
        if !rows.is_empty() {
            due.push(rows);
        }
        next = lookups.next_tenant(destination, tenant.as_str())?;
        if next.is_none() && !wrapped {
            wrapped = true;
            next = lookups.next_tenant(destination, "")?;
        }
    }
    Ok(due)
}

/// A destination's share of rows from its tenants in turn order: every
/// tenant's oldest row, then every tenant's second oldest, and so on. A
/// tenant can take at most `share - (tenants - 1)` rows, since every other
/// takes at least one; PostgreSQL reads no more than that of each.
fn pick<K>(share: usize, tenants: Vec<Vec<Row<K>>>) -> Vec<Row<K>> {
    let most = (share + 1).saturating_sub(tenants.len());
    let mut ranked: Vec<(usize, usize, Row<K>)> = Vec::new();
    for (pos, rows) in tenants.into_iter().enumerate() {
        for (k, row) in rows.into_iter().take(most).enumerate() {
            ranked.push((k, pos, row));
        }
    }
    ranked.sort_by_key(|(k, pos, _)| (*k, *pos));
    ranked.truncate(share);
    ranked.into_iter().map(|(_, _, row)| row).collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(second: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 8, 13, 9, 0, second)
            .single()
            .unwrap_or_default()
    }

    fn rows(tenant: u32, n: u32) -> Vec<Row<(u32, u32)>> {
        (0..n)
            .map(|i| Row {
                available_at: at(i),
                due_at: at(i),
                key: (tenant, i),
            })
            .collect()
    }

    #[test]
    fn tenants_take_rows_in_turns_and_a_short_one_leaves_its_room_to_others() {
        let picked: Vec<_> = pick(6, vec![rows(1, 100), rows(2, 1), rows(3, 100)])
            .into_iter()
            .map(|r| r.key)
            .collect();
        assert_eq!(picked, [(1, 0), (2, 0), (3, 0), (1, 1), (3, 1), (1, 2)]);
    }

    #[test]
    fn shares_split_the_limit_evenly_under_the_cap() {
        let request = ClaimRequest {
            region: crate::domain::Region::US,
            lease_owner: "c".into(),
            lease: chrono::Duration::seconds(30),
            limit: 10,
            per_destination_cap: 3,
            caps: Vec::new(),
            skip: Vec::new(),
            resume_after: None,
        };
        let ids = |n: usize| -> Vec<DestinationId> {
            (0..n)
                .map(|i| DestinationId::new(&format!("d{i}")).unwrap())
                .collect()
        };
        assert_eq!(shares(&request, &ids(3)), [3, 3, 3]);
        assert_eq!(shares(&request, &ids(4)), [3, 3, 2, 2]);
        assert!(shares(&request, &ids(0)).is_empty());
    }

    #[test]
    fn a_destination_with_a_cap_of_its_own_takes_no_more() {
        let slow = DestinationId::new("slow").unwrap();
        let fast = DestinationId::new("fast").unwrap();
        let request = ClaimRequest {
            region: crate::domain::Region::US,
            lease_owner: "c".into(),
            lease: chrono::Duration::seconds(30),
            limit: 64,
            per_destination_cap: 16,
            caps: vec![(slow.clone(), 2), (fast.clone(), 100)],
            skip: Vec::new(),
            resume_after: None,
        };
        assert_eq!(
            shares(&request, &[slow, fast]),
            [2, 16],
            "never past the claim's cap"
        );
    }
}
