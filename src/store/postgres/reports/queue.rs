//! What a runtime's gauges read on PostgreSQL (see `Reports::queue`): one
//! region's live tasks, cheaply, every few seconds in every process.

use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::status::{region_statuses, QueueRow};
use crate::domain::Region;
use crate::store::contract::status::RegionStatus;
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

/// One region's live tasks only, for the gauges every process refreshes.
/// How many wait, and whether for a retry, comes from the region's rows
/// of `task_queue` alone; task rows are read only for the tasks due or in
/// flight (a leased task keeps the `available_at` it was claimed at, so
/// both are at or before now), which give the leases, the expired ones
/// and the oldest eligible task. A leased task still carries the mark it
/// had when claimed, so the leased ones are taken off the count they
/// were in. Delivered and failed rows are never read.
const LIVE_SQL: &str = r#"
WITH clock AS (SELECT coalesce($1, now()) AS now, '-infinity'::timestamptz AS never),
waiting AS (
    SELECT count(*) FILTER (WHERE NOT live.retrying) AS fresh,
           count(*) FILTER (WHERE live.retrying) AS retrying
    FROM task_queue live
    WHERE live.region = $2
),
due AS (
    SELECT count(*) FILTER (WHERE t.state = 'leased') AS leased,
           count(*) FILTER (WHERE t.state = 'leased' AND live.retrying) AS leased_retrying,
           count(*) FILTER (WHERE t.state = 'leased'
                              AND t.lease_expires_at <= (SELECT now FROM clock)) AS expired,
           min(t.available_at) FILTER (
               WHERE t.state IN ('pending', 'retry_wait')
                 AND d.enabled
                 AND (d.paused_until IS NULL OR d.paused_until <= (SELECT now FROM clock)))
               AS oldest
    FROM task_queue live JOIN tasks t ON t.id = live.task_id
         JOIN destinations d ON d.id = t.destination_id
    -- The lower bound excludes nothing; with it the planner sees a range,
    -- which it estimates as narrow (as it is next to the rows due later),
    -- and reads the task rows one by one.
    WHERE live.region = $2 AND live.available_at <= (SELECT now FROM clock)
      AND live.available_at >= (SELECT never FROM clock)
)
SELECT $2 AS region, waiting.fresh - (due.leased - due.leased_retrying) AS pending,
       due.leased, waiting.retrying - due.leased_retrying AS retry_wait,
       0::int8 AS delivered, 0::int8 AS failed, 0::int8 AS cancelled,
       (EXTRACT(EPOCH FROM clock.now - due.oldest) * 1e6)::int8 AS oldest_micros,
       due.expired
FROM waiting, due, clock
"#;

pub(in crate::store) async fn queue(
    store: &PgStore,
    only: Region,
) -> Result<RegionStatus, StoreError> {
    let mut conn = store.conn().await?;
    let rows: Vec<QueueRow> = diesel::sql_query(LIVE_SQL)
        .bind::<Nullable<Timestamptz>, _>(store.clock.now_param())
        .bind::<Text, _>(only.as_str())
        .load(&mut conn)
        .await?;
    let disabled: DisabledCount = diesel::sql_query(
        "SELECT count(*) AS n FROM destinations WHERE region = $1 AND NOT enabled \
         AND deleted_at IS NULL",
    )
    .bind::<Text, _>(only.as_str())
    .get_result(&mut conn)
    .await?;
    let status = region_statuses(rows)?
        .into_iter()
        .next()
        .unwrap_or(RegionStatus {
            region: Some(only),
            ..RegionStatus::default()
        });
    Ok(RegionStatus {
        disabled_destinations: disabled.n,
        ..status
    })
}

#[derive(QueryableByName)]
struct DisabledCount {
    #[diesel(sql_type = BigInt)]
    n: i64,
}
