//! When a claim of a region could next find work, on PostgreSQL.
//!
//! The rule is `store::rules::next_due`'s: what becomes claimable after now, per
//! enabled destination. The same skip scan of `task_queue_due` as the claim
//! walks the region's destinations with live rows (one index descent per
//! destination, so a destination with none costs nothing), and per
//! destination reads its first unleased row in `available_at` order (the
//! scan steps over at most its rows in flight); when that is due already,
//! its first one after now; and only when none is due, its earliest lease
//! to end after now. A leased row keeps the `available_at` it was claimed
//! at, which was due then, so with no unleased row due the leased rows are
//! exactly the rows at or before now: a scan bounded by the destination's
//! rows in flight. (A leased row with a later `available_at`, which only a
//! hand edit could write, is not seen; the Claimer's idle poll still finds
//! it.) The answer is a wait in milliseconds on the database's clock,
//! rounded up, so a caller that sleeps for it does not wake early.
//!
//! Planned at each call, not prepared: a generic plan made while the
//! queue was empty (a new install, a drained queue) read all of
//! `task_queue_pkey` for every destination once a bulk schedule had filled
//! the queue (3.8 s over 60,000 tasks, `tests/store/empty_start.rs`), and
//! a prepared statement keeps its plan until the queue is next analyzed.
//! Planning costs under a millisecond; the Claimer asks only when a claim
//! came back short.

use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use crate::domain::Region;
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

pub const NEXT_DUE_SQL: &str = r#"
WITH RECURSIVE params AS MATERIALIZED (
    -- `since`: now less `store::rules::next_due::JUST_MISSED` (50 ms).
    SELECT p.now, p.now - interval '50 milliseconds' AS since, p.region,
           '-infinity'::timestamptz AS never
    FROM (SELECT coalesce($1, now()) AS now, $2::text AS region) p
),
walk(id) AS (
    (SELECT live.destination_id COLLATE "C" FROM task_queue live
     WHERE live.region = (SELECT region FROM params)
     ORDER BY live.destination_id COLLATE "C" LIMIT 1)
    UNION ALL
    SELECT (SELECT live.destination_id COLLATE "C" FROM task_queue live
            WHERE live.region = (SELECT region FROM params)
              AND live.destination_id COLLATE "C" > w.id
            ORDER BY live.destination_id COLLATE "C" LIMIT 1)
    FROM walk w WHERE w.id IS NOT NULL
),
upcoming AS MATERIALIZED (
    SELECT w.id,
           CASE WHEN d.paused_until > (SELECT now FROM params) THEN d.paused_until END AS pause_end,
           (SELECT live.available_at FROM task_queue live JOIN tasks t ON t.id = live.task_id
            WHERE live.region = (SELECT region FROM params)
              AND live.destination_id COLLATE "C" = w.id
              AND t.state IN ('pending', 'retry_wait') AND t.waiting_change IS NULL
            ORDER BY live.available_at LIMIT 1) AS first_unleased
    FROM walk w JOIN destinations d ON d.id = (w.id COLLATE "default")
    WHERE w.id IS NOT NULL AND d.enabled
),
earliest AS MATERIALIZED (
    SELECT CASE
        -- Due already and not paused: left out by the claim (held here, in
        -- a line, or taken); only its next unleased row to fall due counts.
        WHEN u.first_unleased <= (SELECT since FROM params) AND u.pause_end IS NULL THEN
            (SELECT live.available_at FROM task_queue live JOIN tasks t ON t.id = live.task_id
             WHERE live.region = (SELECT region FROM params)
               AND live.destination_id COLLATE "C" = u.id
               AND live.available_at > (SELECT since FROM params)
               AND t.state IN ('pending', 'retry_wait') AND t.waiting_change IS NULL
             ORDER BY live.available_at LIMIT 1)
        -- Due and paused: when the pause ends.
        WHEN u.first_unleased <= (SELECT since FROM params) THEN
            greatest(u.pause_end, u.first_unleased)
        -- Nothing unleased due: the first to fall due, or the first lease
        -- to end (least skips NULLs: no unleased row, or no lease), and not
        -- before the pause ends. OFFSET 0 computes it once.
        ELSE (SELECT CASE WHEN x.at IS NOT NULL THEN greatest(u.pause_end, x.at) END
              FROM (SELECT least(u.first_unleased, (
                  -- Every row due here is leased, so this reads at most the
                  -- destination's rows in flight. The lower bound excludes
                  -- nothing; with it the planner sees a range, which it
                  -- estimates as narrow (as it is), rather than a third of
                  -- the destination's rows.
                  SELECT min(greatest(t.lease_expires_at, t.not_before))
                  FROM task_queue live JOIN tasks t ON t.id = live.task_id
                  WHERE live.region = (SELECT region FROM params)
                    AND live.destination_id COLLATE "C" = u.id
                    AND live.available_at <= (SELECT now FROM params)
                    AND live.available_at >= (SELECT never FROM params)
                    AND t.state = 'leased' AND t.waiting_change IS NULL
                    AND greatest(t.lease_expires_at, t.not_before) > (SELECT since FROM params)
                  )) AS at
                  OFFSET 0) x)
        END AS at
    FROM upcoming u
)
SELECT ceil(extract(epoch FROM min(at) - (SELECT now FROM params)) * 1000)::bigint AS wait_ms
FROM earliest
WHERE at > (SELECT since FROM params)
"#;

#[derive(QueryableByName)]
struct Wait {
    #[diesel(sql_type = Nullable<BigInt>)]
    wait_ms: Option<i64>,
}

pub(in crate::store::postgres) async fn next_due(
    store: &PgStore,
    region: Region,
) -> Result<Option<chrono::Duration>, StoreError> {
    let mut conn = store.conn().await?;
    let wait: Wait = diesel::sql_query(NEXT_DUE_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(region.as_str())
        .get_result(&mut conn)
        .await?;
    Ok(wait
        .wait_ms
        .map(|ms| chrono::Duration::milliseconds(ms.max(0))))
}
