-- Each parameter once, in order (see prepared.rs); the rest read them here.
-- The two tests a row passes to be taken, named in double braces below, are
-- written once in claim.rs and put in where they are named.
WITH RECURSIVE params AS MATERIALIZED (
    SELECT coalesce($1, now()) AS now, $2::text AS region, $3::text AS lease_owner,
           $4::bigint AS lease_ms, $5::int AS claim_limit, $6::int AS cap,
           $7::text[] AS skip, $8::text COLLATE "C" AS resume_after,
           $9::text COLLATE "C" AS tenant_after,
           -- Destinations with a cap of their own (lower than `cap`): what
           -- their rate sends within a hold.
           $10::text[] AS capped, $11::int[] AS capped_rows
),
clock AS (SELECT now FROM params),
-- One index descent per step: the next destination of the region, in byte
-- order, with a task not yet ended, and the earliest `available_at` of its
-- tasks (the first entry of the destination in `task_queue_due`), which
-- the same descent reads. A destination whose tasks are all due later is
-- passed over on that alone.
after_turn(id, earliest) AS (
    (SELECT live.destination_id COLLATE "C", live.available_at FROM task_queue live
     WHERE live.region = (SELECT region FROM params)
       AND live.destination_id COLLATE "C" > (SELECT resume_after FROM params)
     ORDER BY live.destination_id COLLATE "C", live.available_at LIMIT 1)
    UNION ALL
    SELECT n.id, n.earliest
    FROM after_turn a CROSS JOIN LATERAL (
        SELECT live.destination_id COLLATE "C" AS id, live.available_at AS earliest
        FROM task_queue live
        WHERE live.region = (SELECT region FROM params)
          AND live.destination_id COLLATE "C" > a.id
        ORDER BY live.destination_id COLLATE "C", live.available_at LIMIT 1) n
),
before_turn(id, earliest) AS (
    (SELECT live.destination_id COLLATE "C", live.available_at FROM task_queue live
     WHERE live.region = (SELECT region FROM params)
     ORDER BY live.destination_id COLLATE "C", live.available_at LIMIT 1)
    UNION ALL
    SELECT n.id, n.earliest
    FROM before_turn b CROSS JOIN LATERAL (
        SELECT live.destination_id COLLATE "C" AS id, live.available_at AS earliest
        FROM task_queue live
        WHERE live.region = (SELECT region FROM params)
          AND live.destination_id COLLATE "C" > b.id
        ORDER BY live.destination_id COLLATE "C", live.available_at LIMIT 1) n
    WHERE b.id <= (SELECT resume_after FROM params)
),
walk AS (
    SELECT id, earliest FROM after_turn
    UNION ALL
    SELECT id, earliest FROM before_turn WHERE id <= (SELECT resume_after FROM params)
),
open_destinations AS MATERIALIZED (
    -- Scalar subqueries, not joins: the planner keeps the walk's order and
    -- stops stepping once the LIMIT is reached.
    SELECT w.id
    FROM walk w
    WHERE w.earliest <= (SELECT now FROM clock)
      AND (SELECT d.enabled
                  AND d.id <> ALL((SELECT skip FROM params)::text[])
                  AND (d.paused_until IS NULL OR d.paused_until <= (SELECT now FROM clock))
           FROM destinations d WHERE d.id = (w.id COLLATE "default"))
      AND (SELECT true FROM task_queue live JOIN tasks t ON t.id = live.task_id
           WHERE live.region = (SELECT region FROM params)
             AND live.destination_id COLLATE "C" = w.id
             AND live.available_at <= (SELECT now FROM clock)
             AND {{claimable}}
             AND {{may_go}}
           LIMIT 1)
    LIMIT (SELECT claim_limit FROM params)
),
-- Each open destination's share of the claim: the limit split as evenly as
-- it goes (the first in the turn get one more), at most `cap`, or the
-- destination's own cap.
share AS (
    SELECT o.id,
           least((SELECT cap FROM params),
                 (SELECT c.rows FROM params p, unnest(p.capped, p.capped_rows) AS c(id, rows)
                  WHERE c.id COLLATE "C" = o.id LIMIT 1),
                 (SELECT claim_limit FROM params) / n.open
                 + CASE WHEN o.pos <= (SELECT claim_limit FROM params) % n.open THEN 1 ELSE 0 END)
               AS rows
    FROM (SELECT id, row_number() OVER () AS pos FROM open_destinations) o,
         (SELECT count(*)::int AS open FROM open_destinations) n
),
-- The turn over each open destination's tenants, all destinations in step:
-- each step finds the next tenant, in byte order, with a row the claim may
-- take there, starting after `tenant_after` and wrapping round to the
-- start once (the resume point's own tenant comes last). A destination's
-- walk stops once as many of its tenants have taken part as its share has
-- rows, or when it is back where it began.
--
-- A step is one range read of `task_queue_tenant_turns` from the cursor on, in
-- tenant order: entries not yet due fail the index's `available_at` test
-- without a heap read, so tenants with nothing due cost a few index
-- entries each (about 200 to a page) rather than a descent and a probe of
-- their own.
tenant_walk(destination_id, rows, step, cursor, wrapped, due, found) AS (
    -- Step 0 stands at the resume point; it is no tenant's turn.
    SELECT s.id, s.rows, 0, (SELECT tenant_after FROM params), false, false, 0
    FROM share s
    UNION ALL
    -- Each lateral is computed once per step (OFFSET 0 keeps the planner
    -- from copying a subquery into every place its result is used).
    SELECT w.destination_id, w.rows, w.step + 1, n.tenant_id, b.wrapped,
           n.tenant_id IS NOT NULL, w.found + (n.tenant_id IS NOT NULL)::int
    FROM tenant_walk w
    -- Past the last tenant (no cursor): round to the start, once.
    CROSS JOIN LATERAL (
        SELECT coalesce(w.cursor, '') AS bound, w.wrapped OR w.cursor IS NULL AS wrapped
        OFFSET 0
    ) b
    CROSS JOIN LATERAL (
        SELECT (SELECT live.tenant_id COLLATE "C"
                FROM task_queue live JOIN tasks t ON t.id = live.task_id
                WHERE live.region = (SELECT region FROM params)
                  AND live.destination_id COLLATE "C" = w.destination_id
                  AND live.tenant_id COLLATE "C" > b.bound
                  AND live.available_at <= (SELECT now FROM clock)
                  AND {{claimable}}
                  AND {{may_go}}
                ORDER BY live.tenant_id COLLATE "C" LIMIT 1) AS tenant_id
        OFFSET 0
    ) n
    WHERE w.found < w.rows
      AND NOT (w.cursor IS NULL AND w.wrapped)
      AND (NOT b.wrapped OR n.tenant_id IS NULL
           OR n.tenant_id <= (SELECT tenant_after FROM params))
),
-- The tenants that take part, in turn order, and how many of them each
-- destination has.
turns AS (
    SELECT w.destination_id, w.rows, w.cursor AS tenant_id,
           row_number() OVER (PARTITION BY w.destination_id ORDER BY w.step) AS pos,
           count(*) OVER (PARTITION BY w.destination_id) AS tenants
    FROM tenant_walk w
    WHERE w.due
),
-- Each tenant's oldest claimable rows, read without a lock: at most what it
-- could take (every other tenant takes at least one). Here and below the
-- clock is a scalar, not a join: a nested loop over a one-row CTE keeps the
-- CTE's order, so the planner would read every live row of the tenant and
-- sort them; as a scalar, `task_queue_tenant_turns` hands the rows over in
-- `available_at` order and the scan stops at the limit.
tenant_rows AS (
    SELECT u.destination_id, u.tenant_id, u.rows, u.pos, r.k
    FROM turns u CROSS JOIN LATERAL (
        SELECT row_number() OVER (ORDER BY t.available_at) AS k
        FROM (SELECT live.available_at
              FROM task_queue live JOIN tasks t ON t.id = live.task_id
              WHERE live.region = (SELECT region FROM params)
                AND live.destination_id COLLATE "C" = u.destination_id
                AND live.tenant_id COLLATE "C" = u.tenant_id
                AND live.available_at <= (SELECT now FROM clock)
                AND {{claimable}}
                AND {{may_go}}
              ORDER BY live.available_at
              LIMIT u.rows - u.tenants + 1) t
    ) r
    -- A destination whose turn found one tenant needs no split: its share is
    -- that tenant's quota (`quotas`), and its rows are read once, locked.
    WHERE u.tenants > 1
),
-- Round-robin over the tenants (every tenant's oldest row, then every
-- tenant's second oldest, ...) up to the destination's share: how many
-- rows each tenant takes.
quotas AS (
    SELECT destination_id, tenant_id, count(*)::int AS rows
    FROM (
        SELECT r.destination_id, r.tenant_id, r.rows,
               row_number() OVER (PARTITION BY r.destination_id ORDER BY r.k, r.pos) AS n
        FROM tenant_rows r
    ) ranked
    WHERE n <= rows
    GROUP BY destination_id, tenant_id
    UNION ALL
    SELECT destination_id, tenant_id, rows FROM turns WHERE tenants = 1
),
-- Per tenant, its quota of claimable rows, oldest `available_at` first,
-- each locked with SKIP LOCKED so concurrent claimers never wait on or
-- share a row (a row another claimer took meanwhile is passed over for the
-- next); the quotas add up to at most the limit, so every row locked is
-- leased: a lock taken and not used would cost a write of its own. The
-- values read here are those of the locked row version.
candidates AS (
    SELECT due.* FROM quotas q CROSS JOIN LATERAL (
        SELECT t.id, t.destination_id,
               CASE WHEN t.state = 'leased' THEN t.lease_expires_at ELSE t.available_at END
                   AS due_at,
               t.state::text AS prior_state, t.lease_token AS prior_token,
               t.lease_owner AS prior_owner, t.attempt_count AS prior_attempts,
               t.ordering_key AS line_key,
               -- The line's version as this snapshot saw it (0: never taken).
               CASE WHEN t.ordering_key IS NOT NULL THEN
                   coalesce((SELECT l.version FROM ordering_lines l
                             WHERE l.destination_id = t.destination_id
                               AND l.ordering_key = t.ordering_key), 0)
               END AS line_version
        FROM task_queue live JOIN tasks t ON t.id = live.task_id
        WHERE live.region = (SELECT region FROM params)
          AND live.destination_id COLLATE "C" = q.destination_id
          AND live.tenant_id COLLATE "C" = q.tenant_id
          AND live.available_at <= (SELECT now FROM clock)
          -- The queue row and the task row agree in a snapshot. Here the
          -- task row is locked, and when it changed since the snapshot the
          -- conditions are checked again on its latest version (the queue
          -- row stays the snapshot's), so its own `available_at` is asked
          -- too: a retry committed meanwhile moved it.
          AND t.available_at <= (SELECT now FROM clock)
          AND {{claimable}}
          -- A row that waits in its line is left out whatever the state of
          -- the row ahead (pending, leased: an expired lease is the head's
          -- own, reclaimed here, or retry_wait).
          AND {{may_go}}
        ORDER BY live.available_at
        LIMIT q.rows
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
-- Each chosen keyed row takes its line with a compare-and-set on the
-- line's version, so that two claims whose snapshots each saw their own
-- task as the line's head cannot both lease one: the second waits on the
-- first's row lock and, once that commits, finds the version moved and
-- leaves the line alone (the next claim judges it afresh). Versions come
-- from one sequence and are never reused, so a row made anew after
-- retention pruned the line's old one never carries the version a claim
-- saw on the old. Lines are taken in (destination, key) order, so two
-- claims never wait on each other in a circle. Rows without a key skip
-- this entirely.
lines AS (
    INSERT INTO ordering_lines AS l (destination_id, ordering_key, version, holder)
    SELECT DISTINCT ON (c.destination_id, c.line_key)
           c.destination_id, c.line_key, nextval('ordering_line_versions'), c.id
    FROM chosen c
    WHERE c.line_key IS NOT NULL
    ORDER BY c.destination_id, c.line_key, c.turn
    ON CONFLICT (destination_id, ordering_key) DO UPDATE
        SET version = EXCLUDED.version, holder = EXCLUDED.holder
        WHERE l.version = (SELECT s.line_version FROM chosen s WHERE s.id = EXCLUDED.holder)
    RETURNING l.holder
),
taken AS (
    SELECT c.* FROM chosen c
    WHERE c.line_key IS NULL OR c.id IN (SELECT holder FROM lines)
),
claimed AS (
    UPDATE tasks t
    SET state = 'leased',
        lease_token = nextval('lease_tokens'),
        lease_owner = (SELECT lease_owner FROM params),
        lease_expires_at = clock.now + (SELECT lease_ms FROM params) * interval '1 millisecond',
        attempt_count = t.attempt_count + 1,
        updated_at = clock.now
    FROM clock
    -- By primary key, one probe a row. A join with `taken` would be planned
    -- on an estimate of its size, and a generic plan (the one a prepared
    -- statement settles on) cannot know the limit: it guessed thousands of
    -- rows and hashed the whole table, a sequential scan once `tasks` held
    -- some 300,000 rows (2.7 s a claim).
    WHERE t.id = ANY (ARRAY(SELECT id FROM taken))
    -- Named, not t.*: a prepared statement must keep its result's shape when
    -- a newer schema adds a column under a running process.
    RETURNING t.id, t.tenant_id, t.reminder_id, t.destination_id, t.region, t.state, t.not_before,
              t.available_at, t.retry_horizon_at, t.lease_token, t.lease_owner, t.lease_expires_at,
              t.attempt_count, t.idempotency_key, t.payload_ref, t.last_status, t.failure_reason,
              t.created_at, t.updated_at, t.delivered_at, t.finalized_at, t.attempts_before_replay,
              t.ordering_key, t.traceparent, t.cancelled_at, t.cancelled_by, t.waiting_change,
              t.move_to, t.payload_erased_at
),
abandoned AS (
    INSERT INTO attempts (task_id, attempt_number, lease_token, consumer_id, outcome, recorded_at)
    SELECT chosen.id, chosen.prior_attempts, chosen.prior_token, chosen.prior_owner,
           'abandoned', clock.now
    FROM taken chosen, clock
    WHERE chosen.prior_state = 'leased'
)
SELECT claimed.*, (chosen.prior_state = 'leased') AS reclaimed,
       p.content_type AS payload_content_type, p.key_fingerprint AS payload_key_fingerprint,
       p.nonce AS payload_nonce, p.ciphertext AS payload_ciphertext
FROM claimed JOIN taken chosen ON chosen.id = claimed.id
-- A lateral probe per row, for the same reason: never a scan of payloads.
LEFT JOIN LATERAL (
    SELECT p.content_type, p.key_fingerprint, p.nonce, p.ciphertext
    FROM payloads p WHERE p.payload_ref = claimed.payload_ref
) p ON true
ORDER BY chosen.turn, chosen.due_at, chosen.id
