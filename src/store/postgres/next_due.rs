//! When a claim of a region could next find work, on PostgreSQL.
//!
//! The same skip scan of `tasks_live` as the claim walks the region's
//! destinations with live rows (one index descent per destination, so a
//! destination with none costs nothing), and per enabled destination reads:
//! - its earliest unleased row: the first `pending` or `retry_wait` row in
//!   `available_at` order (the scan steps over at most its rows in flight);
//! - only when that row is not due yet, its earliest lease to run out. A
//!   leased row keeps the `available_at` it was claimed at, which was due
//!   then, so with no unleased row due the leased rows are exactly the rows
//!   at or before now: a scan bounded by the destination's rows in flight.
//!   (A leased row with a later `available_at`, which only a hand edit
//!   could write, is not seen; the Claimer's idle poll still finds it.)
//!
//! Either counts no earlier than the row's deadline and the destination's
//! pause. The answer is a wait in milliseconds on the database's clock,
//! rounded up, so a caller that sleeps for it does not wake early.

use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::prepared::prepared;
use super::{PgStore, StoreError};
use crate::domain::Region;

const NEXT_DUE_SQL: &str = r#"
WITH RECURSIVE params AS MATERIALIZED (
    SELECT coalesce($1, now()) AS now, $2::text AS region
),
walk(id) AS (
    (SELECT t.destination_id COLLATE "C" FROM tasks t
     WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
     ORDER BY t.destination_id COLLATE "C" LIMIT 1)
    UNION ALL
    SELECT (SELECT t.destination_id COLLATE "C" FROM tasks t
            WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
              AND t.destination_id COLLATE "C" > w.id
            ORDER BY t.destination_id COLLATE "C" LIMIT 1)
    FROM walk w WHERE w.id IS NOT NULL
),
unleased AS (
    SELECT w.id, d.paused_until,
           (SELECT t.available_at FROM tasks t
            WHERE t.region = (SELECT region FROM params) AND t.finalized_at IS NULL
              AND t.destination_id COLLATE "C" = w.id
              AND t.state IN ('pending', 'retry_wait')
            ORDER BY t.available_at LIMIT 1) AS at
    FROM walk w JOIN destinations d ON d.id = (w.id COLLATE "default")
    WHERE w.id IS NOT NULL AND d.enabled
),
earliest AS (
    -- (greatest and least skip NULLs: no pause, or no lease to wait for.)
    SELECT greatest(u.paused_until,
                    CASE WHEN u.at <= (SELECT now FROM params) THEN u.at
                    ELSE least(u.at,
                               (SELECT min(greatest(t.lease_expires_at, t.not_before)) FROM tasks t
                                WHERE t.region = (SELECT region FROM params)
                                  AND t.finalized_at IS NULL
                                  AND t.destination_id COLLATE "C" = u.id
                                  AND t.available_at <= (SELECT now FROM params)
                                  AND t.state = 'leased'))
                    END) AS at
    FROM unleased u
)
SELECT ceil(extract(epoch FROM min(at) - (SELECT now FROM params)) * 1000)::bigint AS wait_ms
FROM earliest
"#;

#[derive(QueryableByName)]
struct Wait {
    #[diesel(sql_type = Nullable<BigInt>)]
    wait_ms: Option<i64>,
}

pub(super) async fn next_due(
    store: &PgStore,
    region: Region,
) -> Result<Option<chrono::Duration>, StoreError> {
    let mut conn = store.conn().await?;
    let wait: Wait = prepared(NEXT_DUE_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(region.as_str())
        .get_result(&mut conn)
        .await?;
    Ok(wait
        .wait_ms
        .map(|ms| chrono::Duration::milliseconds(ms.max(0))))
}
