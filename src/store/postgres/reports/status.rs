//! `remit status`'s report on PostgreSQL (see `Reports::status`): every
//! region's counts, its destinations, failures and latency, read in one
//! snapshot.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::tables::rows::region;
use super::status_sql::{
    FAILURES, FAILURES_BY_DESTINATION, LATENCY, STATUS_ENDED, STATUS_LIVE, TOP_RATE_LIMITED,
};
use crate::domain::{DestinationId, Region};
use crate::store::contract::status::{
    Latency, Refused, RegionCounts, RegionStatus, StatusReport, REFUSED_RECENTLY, TOP,
};
use crate::store::contract::StoreError;
use crate::store::postgres::store::PgStore;

const PAUSED_SQL: &str = r#"
SELECT d.id AS destination, d.region, d.paused_until
FROM destinations d
WHERE d.paused_until > coalesce($1, now()) AND ($2::text IS NULL OR d.region = $2)
  AND d.deleted_at IS NULL
ORDER BY d.paused_until DESC, d.id
"#;

const REFUSED_SQL: &str = r#"
SELECT d.id AS destination, d.region, d.refused, d.refused_at
FROM destinations d
WHERE d.refused_at > coalesce($1, now()) - $2 * interval '1 second'
  AND ($3::text IS NULL OR d.region = $3) AND d.deleted_at IS NULL
ORDER BY d.refused_at DESC, d.id
"#;

#[derive(QueryableByName)]
pub(super) struct QueueRow {
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = BigInt)]
    pending: i64,
    #[diesel(sql_type = BigInt)]
    leased: i64,
    #[diesel(sql_type = BigInt)]
    retry_wait: i64,
    #[diesel(sql_type = BigInt)]
    delivered: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
    #[diesel(sql_type = BigInt)]
    cancelled: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    oldest_micros: Option<i64>,
    #[diesel(sql_type = BigInt)]
    expired: i64,
}

/// A destination's live tasks (`STATUS_LIVE`).
#[derive(QueryableByName)]
struct LiveRow {
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Text)]
    destination: String,
    #[diesel(sql_type = BigInt)]
    pending: i64,
    #[diesel(sql_type = BigInt)]
    leased: i64,
    #[diesel(sql_type = BigInt)]
    retry_wait: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    oldest_micros: Option<i64>,
    #[diesel(sql_type = BigInt)]
    expired: i64,
}

/// A region's ended tasks (`STATUS_ENDED`).
#[derive(QueryableByName)]
struct EndedRow {
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = BigInt)]
    delivered: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
    #[diesel(sql_type = BigInt)]
    cancelled: i64,
}

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = Text)]
    destination: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Paused {
    #[diesel(sql_type = Text)]
    destination: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Timestamptz)]
    paused_until: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct RefusedRow {
    #[diesel(sql_type = Text)]
    destination: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Text)]
    refused: String,
    #[diesel(sql_type = Timestamptz)]
    refused_at: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct Reason {
    #[diesel(sql_type = Text)]
    reason: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct LatencyRow {
    #[diesel(sql_type = BigInt)]
    n: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    p50: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    p99: Option<i64>,
}

pub(super) fn region_statuses(rows: Vec<QueueRow>) -> Result<Vec<RegionStatus>, StoreError> {
    rows.into_iter()
        .map(|r| {
            Ok(RegionStatus {
                region: Some(region("tasks.region", &r.region)?),
                pending: r.pending,
                leased: r.leased,
                retry_wait: r.retry_wait,
                delivered: r.delivered,
                failed: r.failed,
                cancelled: r.cancelled,
                oldest_eligible: r.oldest_micros.map(Duration::microseconds),
                expired_leases: r.expired,
                disabled_destinations: 0,
            })
        })
        .collect()
}

/// The destinations with the most tasks waiting for a retry, at most
/// `TOP`: the first rows of `STATUS_LIVE`, which it orders so.
fn top_retry_wait(live: &[LiveRow]) -> Result<Vec<(DestinationId, i64)>, StoreError> {
    live.iter()
        .filter(|row| row.retry_wait > 0)
        .take(usize::try_from(TOP).unwrap_or(usize::MAX))
        .map(|row| {
            let id = DestinationId::new(&row.destination)
                .map_err(|e| super::super::tables::rows::corrupt("tasks.destination_id", e))?;
            Ok((id, row.retry_wait))
        })
        .collect()
}

/// A region's counts before any row is added.
fn empty(region: &str) -> QueueRow {
    QueueRow {
        region: region.to_owned(),
        pending: 0,
        leased: 0,
        retry_wait: 0,
        delivered: 0,
        failed: 0,
        cancelled: 0,
        oldest_micros: None,
        expired: 0,
    }
}

/// Each region that has a task, live or ended, in name order: the live
/// counts summed over its destinations (the oldest the oldest of theirs)
/// and its ended counts.
fn by_region(live: Vec<LiveRow>, ended: Vec<EndedRow>) -> Result<Vec<RegionStatus>, StoreError> {
    let mut regions: BTreeMap<String, QueueRow> = BTreeMap::new();
    for row in live {
        let sum = regions
            .entry(row.region.clone())
            .or_insert_with(|| empty(&row.region));
        sum.pending += row.pending;
        sum.leased += row.leased;
        sum.retry_wait += row.retry_wait;
        sum.expired += row.expired;
        sum.oldest_micros = sum.oldest_micros.max(row.oldest_micros);
    }
    for row in ended {
        let sum = regions
            .entry(row.region.clone())
            .or_insert_with(|| empty(&row.region));
        sum.delivered = row.delivered;
        sum.failed = row.failed;
        sum.cancelled = row.cancelled;
    }
    region_statuses(regions.into_values().collect())
}

fn destinations(rows: Vec<Counted>) -> Result<Vec<(DestinationId, i64)>, StoreError> {
    rows.into_iter()
        .map(|c| {
            let id = DestinationId::new(&c.destination)
                .map_err(|e| super::super::tables::rows::corrupt("tasks.destination_id", e))?;
            Ok((id, c.n))
        })
        .collect()
}

/// Every part of the report from one snapshot (a read-only, repeatable-read
/// transaction), so its counts add up and `now()` is one instant.
pub(in crate::store) async fn status(
    store: &PgStore,
    only: Option<Region>,
) -> Result<StatusReport, StoreError> {
    let mut conn = store.conn().await?;
    conn.build_transaction()
        .read_only()
        .repeatable_read()
        .run::<_, StoreError, _>(async |conn| read(store, conn, only).await)
        .await
}

/// One region's tasks by state, as the report counts them (the overview
/// shows these beside its own plots, and nothing else of the report).
pub(in crate::store) async fn region_counts(
    store: &PgStore,
    only: Region,
) -> Result<RegionCounts, StoreError> {
    let mut conn = store.conn().await?;
    conn.build_transaction()
        .read_only()
        .repeatable_read()
        .run::<_, StoreError, _>(async |conn| {
            let (now, _, regions) = counted(store, conn, &Some(only.to_string())).await?;
            Ok(RegionCounts::of(now, only, regions))
        })
        .await
}

/// The report's `now`, the destinations with the most tasks waiting for a
/// retry, and each region's tasks by state: one pass over the live rows,
/// and the ended ones counted from the indexes.
async fn counted(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    only_text: &Option<String>,
) -> Result<(DateTime<Utc>, Vec<(DestinationId, i64)>, Vec<RegionStatus>), StoreError> {
    let now_param = store.clock.now_param();
    #[derive(QueryableByName)]
    struct Now {
        #[diesel(sql_type = Timestamptz)]
        now: DateTime<Utc>,
    }
    let now: Now = diesel::sql_query("SELECT coalesce($1, now()) AS now")
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .get_result(conn)
        .await?;
    let live: Vec<LiveRow> = diesel::sql_query(STATUS_LIVE)
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .bind::<Nullable<Text>, _>(only_text)
        .load(conn)
        .await?;
    let ended: Vec<EndedRow> = diesel::sql_query(STATUS_ENDED)
        .bind::<Nullable<Text>, _>(only_text)
        .load(conn)
        .await?;
    let top_retry_wait = top_retry_wait(&live)?;
    Ok((now.now, top_retry_wait, by_region(live, ended)?))
}

async fn read(
    store: &PgStore,
    conn: &mut AsyncPgConnection,
    only: Option<Region>,
) -> Result<StatusReport, StoreError> {
    let now_param = store.clock.now_param();
    let only_text = only.map(|r| r.to_string());
    let (now, top_retry_wait, regions) = counted(store, conn, &only_text).await?;
    let paused: Vec<Paused> = diesel::sql_query(PAUSED_SQL)
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .bind::<Nullable<Text>, _>(&only_text)
        .load(conn)
        .await?;
    let refused: Vec<RefusedRow> = diesel::sql_query(REFUSED_SQL)
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .bind::<BigInt, _>(REFUSED_RECENTLY.num_seconds())
        .bind::<Nullable<Text>, _>(&only_text)
        .load(conn)
        .await?;
    let limited: Vec<Counted> = diesel::sql_query(TOP_RATE_LIMITED)
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .bind::<Nullable<Text>, _>(&only_text)
        .bind::<BigInt, _>(TOP)
        .load(conn)
        .await?;
    let failures: Vec<Reason> = diesel::sql_query(FAILURES)
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .bind::<Nullable<Text>, _>(&only_text)
        .load(conn)
        .await?;
    let failing: Vec<Counted> = diesel::sql_query(FAILURES_BY_DESTINATION)
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .bind::<Nullable<Text>, _>(&only_text)
        .bind::<BigInt, _>(TOP)
        .load(conn)
        .await?;
    let latency: LatencyRow = diesel::sql_query(LATENCY)
        .bind::<Nullable<Timestamptz>, _>(now_param)
        .bind::<Nullable<Text>, _>(&only_text)
        .get_result(conn)
        .await?;
    let disabled: Vec<super::super::tables::rows::DestinationRow> = {
        use super::super::tables::schema::destinations;
        use diesel::prelude::*;
        let mut query = destinations::table
            .filter(destinations::enabled.eq(false))
            .filter(destinations::deleted_at.is_null())
            .select(super::super::tables::rows::DestinationRow::as_select())
            .order(destinations::id)
            .into_boxed();
        if let Some(only) = &only_text {
            query = query.filter(destinations::region.eq(only.clone()));
        }
        diesel_async::RunQueryDsl::load(query, conn).await?
    };
    let disabled = disabled
        .into_iter()
        .map(crate::domain::Destination::try_from)
        .collect::<Result<_, StoreError>>()?;
    let paused = paused
        .into_iter()
        .map(|p| {
            let id = DestinationId::new(&p.destination)
                .map_err(|e| super::super::tables::rows::corrupt("destinations.id", e))?;
            Ok((
                id,
                region("destinations.region", &p.region)?,
                p.paused_until,
            ))
        })
        .collect::<Result<_, StoreError>>()?;
    let refused = refused
        .into_iter()
        .map(|r| {
            Ok(Refused {
                destination: DestinationId::new(&r.destination)
                    .map_err(|e| super::super::tables::rows::corrupt("destinations.id", e))?,
                region: region("destinations.region", &r.region)?,
                why: r.refused,
                last: r.refused_at,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(StatusReport {
        now,
        regions,
        paused,
        refused,
        disabled,
        top_retry_wait,
        top_rate_limited: destinations(limited)?,
        failures_last_day: failures.into_iter().map(|r| (r.reason, r.n)).collect(),
        failures_by_destination_last_day: destinations(failing)?,
        deadline_to_delivery: Latency::from_micros(latency.n, latency.p50, latency.p99),
    })
}
