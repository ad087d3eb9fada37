//! The claim: one statement that leases due rows and expired leases of one
//! region, a bounded number per destination, and logs the attempts it took
//! over from consumers whose leases ran out.

use diesel::sql_types::{Array, BigInt, Bool, Bytea, Integer, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::prepared::prepared;
use super::rows::TaskRow;
use super::StoreStats;
use super::{ClaimRequest, PgStore, StoreError};
use crate::domain::{ClaimedTask, Payload, Task};
use crate::payload_crypto::SealedPayload;

/// How it works, from the inside out:
/// 1. `after_turn` and `before_turn`: the region's destinations that have
///    live tasks, in byte order, starting after `resume_after` ($8) and
///    wrapping round to the start, so successive claims take turns over
///    them. Each step is one descent of `tasks_live` to the next
///    destination (a skip scan), so a destination with no live task is
///    never visited, however many the region has registered.
/// 2. `open_destinations`: the first `limit` of those that are enabled,
///    not paused, not skipped by the caller, and have a claimable row: due
///    and unleased, or leased with the lease run out, and in both cases
///    past `not_before`. The steps stop there, so a claim's cost follows
///    the work it finds.
/// 3. `share` and `candidates`: per destination, its share of the claim
///    (the limit spread evenly over the open destinations, at most `cap`)
///    of claimable rows, oldest `available_at` first, each locked with SKIP
///    LOCKED so concurrent claimers never wait on or share a row; the shares
///    add up to at most the limit, so every row locked is leased. A leased row
///    keeps its `available_at` (see below), so the scan reads past the
///    destination's rows in flight; there are at most as many as its
///    in-flight limit. The values read here are those of the locked row
///    version.
/// 4. `chosen`: round-robin across destinations (every destination's first
///    row, then every second row, ...) up to `limit`.
/// 5. `claimed`: the lease, with a fresh fencing token from the sequence.
///    It writes no indexed column (`tasks_live` keys region, destination
///    and `available_at`, and holds rows whose `finalized_at` is unset), so
///    PostgreSQL can update the row in place (HOT) without a new index
///    entry.
/// 6. `abandoned`: one attempt row per reclaimed expired lease, so the log
///    shows the attempt whose lease owner vanished.
/// 7. Each row comes back with its sealed payload, so the sender needs no
///    read of its own.
///
/// Only the states named here are ever claimed: a row in a state added by a
/// newer schema is left alone by this code.
pub(super) const CLAIM_SQL: &str = r#"
-- Each parameter once, in order (see prepared.rs); the rest read them here.
WITH RECURSIVE params AS MATERIALIZED (
    SELECT coalesce($1, now()) AS now, $2::text AS region, $3::text AS consumer,
           $4::bigint AS lease_ms, $5::int AS claim_limit, $6::int AS cap,
           $7::text[] AS skip, $8::text COLLATE "C" AS resume_after
),
clock AS (SELECT now FROM params),
-- One index descent per step: the next destination of the region, in byte
-- order, with a row that has not ended.
after_turn(id) AS (
    (SELECT t.destination_id COLLATE "C" FROM tasks t
     WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
       AND t.destination_id COLLATE "C" > (SELECT resume_after FROM params)
     ORDER BY t.destination_id COLLATE "C" LIMIT 1)
    UNION ALL
    SELECT (SELECT t.destination_id COLLATE "C" FROM tasks t
            WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
              AND t.destination_id COLLATE "C" > a.id
            ORDER BY t.destination_id COLLATE "C" LIMIT 1)
    FROM after_turn a WHERE a.id IS NOT NULL
),
before_turn(id) AS (
    (SELECT t.destination_id COLLATE "C" FROM tasks t
     WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
     ORDER BY t.destination_id COLLATE "C" LIMIT 1)
    UNION ALL
    SELECT (SELECT t.destination_id COLLATE "C" FROM tasks t
            WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
              AND t.destination_id COLLATE "C" > b.id
            ORDER BY t.destination_id COLLATE "C" LIMIT 1)
    FROM before_turn b
    WHERE b.id IS NOT NULL AND b.id <= (SELECT resume_after FROM params)
),
walk AS (
    SELECT id FROM after_turn WHERE id IS NOT NULL
    UNION ALL
    SELECT id FROM before_turn WHERE id IS NOT NULL AND id <= (SELECT resume_after FROM params)
),
open_destinations AS MATERIALIZED (
    -- Scalar subqueries, not joins: the planner keeps the walk's order and
    -- stops stepping once the LIMIT is reached.
    SELECT w.id
    FROM walk w
    WHERE (SELECT d.enabled
                  AND d.id <> ALL((SELECT skip FROM params)::text[])
                  AND (d.paused_until IS NULL OR d.paused_until <= (SELECT now FROM clock))
           FROM destinations d WHERE d.id = (w.id COLLATE "default"))
      -- (available_at >= not_before is a CHECK, so an unleased row due now
      -- is past its deadline too; a lease carries no such promise.)
      AND (SELECT true FROM tasks t
           WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
             AND t.destination_id COLLATE "C" = w.id
             AND t.available_at <= (SELECT now FROM clock)
             AND (t.state IN ('pending', 'retry_wait')
                  OR (t.state = 'leased' AND t.lease_expires_at <= (SELECT now FROM clock)
                      AND t.not_before <= (SELECT now FROM clock)))
           LIMIT 1)
    LIMIT (SELECT claim_limit FROM params)
),
-- Each open destination's share of the claim: the limit split as evenly as
-- it goes (the first in the turn get one more), at most `cap`, so the rows
-- locked below are the rows leased: a lock taken and not used would cost a
-- write of its own.
share AS (
    SELECT o.id,
           least((SELECT cap FROM params),
                 (SELECT claim_limit FROM params) / n.open
                 + CASE WHEN o.pos <= (SELECT claim_limit FROM params) % n.open THEN 1 ELSE 0 END)
               AS rows
    FROM (SELECT id, row_number() OVER () AS pos FROM open_destinations) o,
         (SELECT count(*)::int AS open FROM open_destinations) n
),
candidates AS (
    SELECT due.* FROM share d CROSS JOIN LATERAL (
        SELECT t.id, t.destination_id,
               CASE WHEN t.state = 'leased' THEN t.lease_expires_at ELSE t.available_at END
                   AS due_at,
               t.state::text AS prior_state, t.lease_token AS prior_token,
               t.lease_owner AS prior_owner, t.attempt_count AS prior_attempts
        FROM tasks t, clock
        WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
          AND t.destination_id COLLATE "C" = d.id
          AND t.available_at <= clock.now
          AND (t.state IN ('pending', 'retry_wait')
               OR (t.state = 'leased' AND t.lease_expires_at <= clock.now
                   AND t.not_before <= clock.now))
        ORDER BY t.available_at
        LIMIT d.rows
        FOR UPDATE OF t SKIP LOCKED
    ) due
),
chosen AS (
    SELECT * FROM (
        SELECT c.*, row_number() OVER (PARTITION BY c.destination_id ORDER BY c.due_at, c.id) AS turn
        FROM candidates c
    ) ranked
    WHERE turn <= (SELECT cap FROM params)
    ORDER BY turn, due_at, id
    LIMIT (SELECT claim_limit FROM params)
),
claimed AS (
    UPDATE tasks t
    SET state = 'leased',
        lease_token = nextval('lease_tokens'),
        lease_owner = (SELECT consumer FROM params),
        lease_expires_at = clock.now + (SELECT lease_ms FROM params) * interval '1 millisecond',
        attempt_count = t.attempt_count + 1,
        updated_at = clock.now
    FROM chosen, clock
    WHERE t.id = chosen.id
    -- Named, not t.*: a prepared statement must keep its result's shape when
    -- a newer schema adds a column under a running process.
    RETURNING t.id, t.tenant_id, t.reminder_id, t.destination_id, t.region, t.state, t.not_before,
              t.available_at, t.retry_horizon_at, t.lease_token, t.lease_owner, t.lease_expires_at,
              t.attempt_count, t.idempotency_key, t.payload_ref, t.last_status, t.failure_reason,
              t.created_at, t.updated_at, t.delivered_at, t.finalized_at, t.attempts_before_replay
),
abandoned AS (
    INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, outcome, recorded_at)
    SELECT chosen.id, chosen.prior_attempts, chosen.prior_token, chosen.prior_owner,
           'abandoned', clock.now
    FROM chosen, clock
    WHERE chosen.prior_state = 'leased'
)
SELECT claimed.*, (chosen.prior_state = 'leased') AS reclaimed,
       p.content_type AS payload_content_type, p.key_fingerprint AS payload_key_fingerprint,
       p.nonce AS payload_nonce, p.ciphertext AS payload_ciphertext
FROM claimed JOIN chosen ON chosen.id = claimed.id
LEFT JOIN payloads p ON p.payload_ref = claimed.payload_ref
ORDER BY chosen.turn, chosen.due_at, chosen.id
"#;

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
    /// or cannot be opened here, which `Store::payload` then reports.
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

pub(super) async fn claim_due(
    store: &PgStore,
    request: &ClaimRequest,
) -> Result<Vec<ClaimedTask>, StoreError> {
    if request.limit == 0 || request.per_destination_cap == 0 {
        return Ok(Vec::new());
    }
    let mut conn = store.conn().await?;
    let rows: Vec<ClaimedRow> = prepared(CLAIM_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(request.region.as_str())
        .bind::<Text, _>(&request.lease_owner)
        .bind::<BigInt, _>(request.lease.num_milliseconds().max(1))
        .bind::<Integer, _>(clamp(request.limit))
        .bind::<Integer, _>(clamp(request.per_destination_cap))
        .bind::<Array<Text>, _>(request.skip.iter().map(|d| d.as_str()).collect::<Vec<_>>())
        .bind::<Text, _>(request.resume_after.as_ref().map_or("", |d| d.as_str()))
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
