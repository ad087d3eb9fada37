//! The claim: one statement that leases due rows and expired leases of one
//! region, a bounded number per destination, and logs the attempts it took
//! over from lease owners whose leases ran out.

use std::sync::LazyLock;

use diesel::sql_types::{Array, BigInt, Bool, Bytea, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::super::connection::prepared::prepared;
use super::super::tables::rows::TaskRow;
use crate::domain::{ClaimedTask, Payload, Task};
use crate::payload_crypto::SealedPayload;
use crate::store::contract::{ClaimRequest, StoreError, StoreStats};
use crate::store::postgres::store::PgStore;

/// Rows are found through `task_queue` (one row per task not yet ended,
/// with the keys the claim orders by) and checked on their task row,
/// which holds the state and the lease; both are the same snapshot's, and
/// the row locked in step 6 is checked again on its latest version.
///
/// How it works, from the inside out:
/// 1. `after_turn` and `before_turn`: the region's destinations that have
///    live tasks, in byte order, starting after `resume_after` ($8) and
///    wrapping round to the start, so successive claims take turns over
///    them. Each step is one descent of `task_queue_due` to the next
///    destination (a skip scan of the queue, which holds only the tasks
///    not yet ended), so a destination with no live task is never visited,
///    however many the region has registered; the same descent reads the
///    destination's earliest `available_at`, so one whose tasks are all due
///    later costs that step and nothing more.
/// 2. `open_destinations`: the first `limit` of those that are enabled,
///    not paused, not skipped by the caller, and have a claimable row: due
///    and unleased, or leased with the lease run out, and in both cases
///    past `not_before`. The steps stop there, so a claim's cost follows
///    the work it finds.
/// 3. `share`: each open destination's share of the claim, the limit
///    spread evenly over the open destinations, at most `cap`; the shares
///    add up to at most the limit.
/// 4. `tenant_walk` and `turns`: per destination, a turn over the tenants
///    with live tasks there, in byte order, starting after `tenant_after`
///    ($9) and wrapping round, one range read of `task_queue_tenant_turns` per
///    step (a tenant with nothing live there is never visited); it stops
///    once as many tenants with a claimable row are found as the share has
///    rows.
/// 5. `tenant_rows` and `quotas`: each such tenant's oldest claimable rows
///    (`available_at` order, at most what it could take), read without a
///    lock, taken round-robin across the destination's tenants (every
///    tenant's oldest, then every second oldest, ...) up to the share: how
///    many rows each tenant takes.
/// 6. `candidates`: per tenant, its quota of claimable rows, oldest
///    `available_at` first, each locked with SKIP LOCKED so concurrent
///    claimers never wait on or share a row; the quotas add up to at most
///    the limit, so every row locked is leased. A leased row keeps its
///    `available_at` (see below), so the scans read past the tenant's rows
///    in flight; there are at most as many as the destination's in-flight
///    limit. The values read here are those of the locked row version.
///
///    A row with an `ordering_key` is claimable only while no other row of
///    its destination and key that has not ended comes before it in
///    (`not_before`, `id`): the head of each line goes alone, and a head in
///    `retry_wait` or leased holds the rest. The probes of steps 2 and 4,
///    the reads of step 5 and the scan here all apply it, so a destination
///    or tenant whose only due rows wait in a line is not counted. The
///    probe is one descent of the partial index `task_queue_lines` (keyed
///    rows that have not ended); a row without a key never reaches it.
/// 7. `chosen`: round-robin across destinations (every destination's first
///    row, then every second row, ...) up to `limit`.
/// 8. `claimed`: the lease, with a fresh fencing token from the sequence.
///    No index of `tasks` names a column it writes (the claim finds rows
///    through `task_queue`, whose rows it leaves alone), so PostgreSQL can
///    update the row in place (HOT) without a new index entry.
/// 9. `abandoned`: one attempt row per reclaimed expired lease, so the log
///    shows the attempt whose lease owner vanished.
/// 10. Each row comes back with its sealed payload, so the sender needs
///     no read of its own.
///
/// Only the states named here are ever claimed: a row in a state added by a
/// newer schema is left alone by this code.
///
/// A rule about which of a destination's rows may go (a predicate on a row
/// and its neighbours) belongs where the claimable rows are defined: in
/// `open_destinations`, the tenant walk's check, `tenant_rows` and
/// `candidates`.
///
/// The text is a file of its own (`claim.sql`), with the two tests a row
/// passes to be taken ([`CLAIMABLE`] and [`MAY_GO`]) named where they
/// apply and written once here; the tests that measure what a claim reads
/// run the very statement the store runs ([`claim_sql`]).
const CLAIM_TEMPLATE: &str = include_str!("claim.sql");

/// A task row `t` the claim may lease, on the claim's `clock`: waiting
/// (`pending`, `retry_wait`), or leased with the lease run out and past
/// its deadline. (`available_at >= not_before` is a CHECK, so an unleased
/// row due now is past its deadline too; a lease carries no such
/// promise.) A row with a change waiting for its attempt is never taken:
/// the settle applies the change (`changes::settle`). The same rule as
/// `lifecycle::claimable_since`.
const CLAIMABLE: &str = "(t.waiting_change IS NULL AND (t.state IN ('pending', 'retry_wait') \
    OR (t.state = 'leased' AND t.lease_expires_at <= (SELECT now FROM clock) \
        AND t.not_before <= (SELECT now FROM clock))))";

/// Whether task row `t` may go, by its ordering line: a row with an
/// `ordering_key` waits while any other row of its destination and key
/// that has not ended comes before it, rows already attempted first, then
/// in (`not_before`, `id`). A row not yet attempted is checked for an
/// attempted one only once it is first in (`not_before`, `id`), so a
/// line's waiting rows each cost one descent of `task_queue_lines`; a row
/// without a key stops at the first test. The same rule as
/// `ordering::waits`, and as `ordering::SQL_MAY_GO` over SQLite's table.
const MAY_GO: &str = "(t.ordering_key IS NULL OR CASE \
    WHEN t.attempt_count > 0 THEN NOT EXISTS ( \
        SELECT 1 FROM task_queue ahead JOIN tasks e ON e.id = ahead.task_id \
        WHERE ahead.destination_id = t.destination_id AND ahead.ordering_key = t.ordering_key \
          AND (ahead.not_before, ahead.task_id) < (t.not_before, t.id) \
          AND e.attempt_count > 0) \
    WHEN EXISTS ( \
        SELECT 1 FROM task_queue ahead \
        WHERE ahead.destination_id = t.destination_id AND ahead.ordering_key = t.ordering_key \
          AND (ahead.not_before, ahead.task_id) < (t.not_before, t.id)) THEN false \
    ELSE NOT EXISTS ( \
        SELECT 1 FROM task_queue ahead JOIN tasks e ON e.id = ahead.task_id \
        WHERE ahead.destination_id = t.destination_id AND ahead.ordering_key = t.ordering_key \
          AND e.attempt_count > 0) \
    END)";

static CLAIM_SQL: LazyLock<String> = LazyLock::new(|| {
    CLAIM_TEMPLATE
        .replace("{{claimable}}", CLAIMABLE)
        .replace("{{may_go}}", MAY_GO)
});

/// The claim as the store prepares it.
pub fn claim_sql() -> &'static str {
    &CLAIM_SQL
}

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(embed)]
    task: TaskRow,
    #[diesel(sql_type = Bool)]
    reclaimed: bool,
    #[diesel(sql_type = Nullable<Text>)]
    payload_content_type: Option<String>,
    #[diesel(sql_type = Nullable<Bytea>)]
    payload_key_fingerprint: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Bytea>)]
    payload_nonce: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Bytea>)]
    payload_ciphertext: Option<Vec<u8>>,
}

impl ClaimedRow {
    /// The payload opened with this store's key; `None` when it is missing
    /// or cannot be opened here, which `Schedule::payload` then reports.
    fn open_payload(&mut self, store: &PgStore, payload_ref: uuid::Uuid) -> Option<Payload> {
        let content_type = self.payload_content_type.take()?;
        let sealed = SealedPayload {
            key_fingerprint: self.payload_key_fingerprint.take()?,
            nonce: self.payload_nonce.take()?,
            ciphertext: self.payload_ciphertext.take()?,
        };
        let body = store.key.open(payload_ref, &content_type, &sealed).ok()?;
        Some(Payload { content_type, body })
    }
}

pub(in crate::store::postgres) async fn claim_due(
    store: &PgStore,
    request: &ClaimRequest,
) -> Result<Vec<ClaimedTask>, StoreError> {
    if request.limit == 0 || request.per_destination_cap == 0 {
        return Ok(Vec::new());
    }
    let mut conn = store.conn().await?;
    let rows: Vec<ClaimedRow> = prepared(claim_sql())
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(request.region.as_str())
        .bind::<Text, _>(&request.lease_owner)
        .bind::<BigInt, _>(request.lease.num_milliseconds().max(1))
        .bind::<Integer, _>(clamp(request.limit))
        .bind::<Integer, _>(clamp(request.per_destination_cap))
        .bind::<Array<Text>, _>(request.skip.iter().map(|d| d.as_str()).collect::<Vec<_>>())
        .bind::<Text, _>(request.destination_after())
        .bind::<Text, _>(request.tenant_after())
        .bind::<Array<Text>, _>(
            request
                .caps
                .iter()
                .map(|(d, _)| d.as_str())
                .collect::<Vec<_>>(),
        )
        .bind::<Array<Integer>, _>(
            request
                .caps
                .iter()
                .map(|(_, cap)| clamp(*cap))
                .collect::<Vec<_>>(),
        )
        .load(&mut conn)
        .await?;

    let claimed = rows
        .into_iter()
        .map(|mut row| {
            let reclaimed = row.reclaimed;
            let payload = row.open_payload(store, row.task.payload_ref);
            let task = Task::try_from(row.task)?;
            let (lease_token, lease_expires_at) = task
                .lease_token
                .zip(task.lease_expires_at)
                .ok_or_else(|| StoreError::Corrupt {
                    column: "tasks.lease_token",
                    reason: "a claimed row came back without a lease".into(),
                })?;
            Ok(ClaimedTask {
                task,
                lease_token,
                lease_expires_at,
                reclaimed,
                payload,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;

    let reclaimed = claimed.iter().filter(|c| c.reclaimed).count();
    StoreStats::add(&store.stats.claimed, claimed.len() as u64);
    StoreStats::add(&store.stats.reclaimed, reclaimed as u64);
    Ok(claimed)
}

fn clamp(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_test_is_put_in_and_each_where_the_claim_needs_it() {
        let sql = claim_sql();
        assert!(!sql.contains("{{"), "a name left in the claim");
        // Each in the destination probe, the tenant walk, the tenants'
        // rows and the locked candidates.
        assert_eq!(sql.matches(CLAIMABLE).count(), 4);
        assert_eq!(sql.matches(MAY_GO).count(), 4);
    }
}
