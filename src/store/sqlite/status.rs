//! `status` on SQLite (see `status`). Instants are microseconds, so the
//! arithmetic is on integers; the latency percentiles are computed from the
//! last hour's deliveries.

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::rows::{instant, micros};
use super::store::SqliteStore;
use crate::domain::{DestinationId, Region};
use crate::store::contract::status::{
    Latency, Refused, RegionCounts, RegionStatus, StatusReport, REFUSED_RECENTLY, TOP,
};
use crate::store::contract::StoreError;
use crate::store::rules::columns::{corrupt, region};

const HOUR_MICROS: i64 = 3_600_000_000;

#[derive(QueryableByName)]
struct QueueRow {
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
    oldest_due: Option<i64>,
    #[diesel(sql_type = BigInt)]
    expired: i64,
}

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Paused {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = BigInt)]
    paused_until: i64,
}

#[derive(QueryableByName)]
struct RefusedRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    region: String,
    #[diesel(sql_type = Text)]
    refused: String,
    #[diesel(sql_type = BigInt)]
    refused_at: i64,
}

#[derive(QueryableByName)]
struct Sample {
    #[diesel(sql_type = BigInt)]
    micros: i64,
}

/// The oldest task a claim would take now: due, unleased, with no change
/// waiting for its attempt, its destination enabled and not paused (as the
/// claim requires).
const OLDEST_DUE: &str = "min(CASE WHEN t.state IN ('pending', 'retry_wait') \
     AND max(t.available_at, t.not_before) <= ?1 AND t.waiting_change IS NULL \
     AND d.enabled = 1 \
     AND (d.paused_until IS NULL OR d.paused_until <= ?1) \
     THEN max(t.available_at, t.not_before) END)";

/// Tasks by state per region (every row, for `remit status`).
fn regions(
    conn: &mut SqliteConnection,
    only: Option<Region>,
    now: i64,
) -> Result<Vec<RegionStatus>, StoreError> {
    let rows: Vec<QueueRow> = diesel::sql_query(format!(
        "SELECT t.region AS region, \
           sum(t.state = 'pending') AS pending, sum(t.state = 'leased') AS leased, \
           sum(t.state = 'retry_wait') AS retry_wait, sum(t.state = 'delivered') AS delivered, \
           sum(t.state = 'failed') AS failed, sum(t.state = 'cancelled') AS cancelled, {OLDEST_DUE} AS oldest_due, \
           sum(t.state = 'leased' AND t.lease_expires_at <= ?1) AS expired \
         FROM tasks t JOIN destinations d ON d.id = t.destination_id \
         WHERE (?2 IS NULL OR t.region = ?2) \
         GROUP BY t.region ORDER BY t.region"
    ))
    .bind::<BigInt, _>(now)
    .bind::<Nullable<Text>, _>(only.map(|r| r.to_string()))
    .load(conn)?;
    rows.into_iter().map(|r| region_status(r, now)).collect()
}

/// One region's live tasks only, for the gauges: each part names its
/// states as the partial indexes the claim reads do, so ended rows are
/// never read.
fn live(conn: &mut SqliteConnection, only: Region, now: i64) -> Result<RegionStatus, StoreError> {
    let row: QueueRow = diesel::sql_query(format!(
        "SELECT ?2 AS region, \
           (SELECT count(*) FROM tasks WHERE state = 'pending' AND region = ?2) AS pending, \
           (SELECT count(*) FROM tasks WHERE state = 'leased' AND region = ?2) AS leased, \
           (SELECT count(*) FROM tasks WHERE state = 'retry_wait' AND region = ?2) AS retry_wait, \
           0 AS delivered, 0 AS failed, 0 AS cancelled, \
           (SELECT {OLDEST_DUE} FROM tasks t JOIN destinations d ON d.id = t.destination_id \
             WHERE t.state IN ('pending', 'retry_wait') AND t.region = ?2) AS oldest_due, \
           (SELECT count(*) FROM tasks WHERE state = 'leased' AND region = ?2 \
             AND lease_expires_at <= ?1) AS expired"
    ))
    .bind::<BigInt, _>(now)
    .bind::<Text, _>(only.as_str())
    .get_result(conn)?;
    #[derive(QueryableByName)]
    struct DisabledCount {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let disabled: DisabledCount = diesel::sql_query(
        "SELECT count(*) AS n FROM destinations WHERE region = ?1 AND enabled = 0 \
         AND deleted_at IS NULL",
    )
    .bind::<Text, _>(only.as_str())
    .get_result(conn)?;
    Ok(RegionStatus {
        disabled_destinations: disabled.n,
        ..region_status(row, now)?
    })
}

fn region_status(r: QueueRow, now: i64) -> Result<RegionStatus, StoreError> {
    Ok(RegionStatus {
        region: Some(region("tasks.region", &r.region)?),
        pending: r.pending,
        leased: r.leased,
        retry_wait: r.retry_wait,
        delivered: r.delivered,
        failed: r.failed,
        cancelled: r.cancelled,
        oldest_eligible: r
            .oldest_due
            .map(|due| chrono::Duration::microseconds(now - due)),
        expired_leases: r.expired,
        disabled_destinations: 0,
    })
}

fn destinations(rows: Vec<Counted>) -> Result<Vec<(DestinationId, i64)>, StoreError> {
    rows.into_iter()
        .map(|c| {
            let id = DestinationId::new(&c.name).map_err(|e| corrupt("tasks.destination_id", e))?;
            Ok((id, c.n))
        })
        .collect()
}

impl SqliteStore {
    pub(super) async fn queue(&self, only: Region) -> Result<RegionStatus, StoreError> {
        self.run(false, move |conn, ctx| live(conn, only, micros(ctx.now)))
            .await
    }

    /// One region's tasks by state, as the report counts them.
    pub(super) async fn region_counts(&self, only: Region) -> Result<RegionCounts, StoreError> {
        self.run(false, move |conn, ctx| {
            let regions = regions(conn, Some(only), micros(ctx.now))?;
            Ok(RegionCounts::of(ctx.now, only, regions))
        })
        .await
    }

    /// Every part of the report from one snapshot: a read transaction,
    /// which in WAL mode sees the file as of its first read.
    pub(super) async fn status(&self, only: Option<Region>) -> Result<StatusReport, StoreError> {
        self.run(false, move |conn, ctx| {
            diesel::Connection::transaction(conn, |conn| read(conn, ctx, only))
        })
        .await
    }
}

fn read(
    conn: &mut SqliteConnection,
    ctx: &super::store::Ctx,
    only: Option<Region>,
) -> Result<StatusReport, StoreError> {
    let now = micros(ctx.now);
    let text = only.map(|r| r.to_string());
    let regions = regions(conn, only, now)?;
    let paused: Vec<Paused> = diesel::sql_query(
        "SELECT id, region, paused_until FROM destinations \
                 WHERE paused_until > ?1 AND (?2 IS NULL OR region = ?2) \
                   AND deleted_at IS NULL \
                 ORDER BY paused_until DESC, id",
    )
    .bind::<BigInt, _>(now)
    .bind::<Nullable<Text>, _>(&text)
    .load(conn)?;
    let refused: Vec<RefusedRow> = diesel::sql_query(
        "SELECT id, region, refused, refused_at FROM destinations \
                 WHERE refused IS NOT NULL AND refused_at > ?1 \
                   AND (?2 IS NULL OR region = ?2) AND deleted_at IS NULL \
                 ORDER BY refused_at DESC, id",
    )
    .bind::<BigInt, _>(now - REFUSED_RECENTLY.num_microseconds().unwrap_or(i64::MAX))
    .bind::<Nullable<Text>, _>(&text)
    .load(conn)?;
    let retry: Vec<Counted> = diesel::sql_query(
        "SELECT destination_id AS name, count(*) AS n FROM tasks \
                 WHERE state = 'retry_wait' AND (?1 IS NULL OR region = ?1) \
                 GROUP BY destination_id ORDER BY n DESC, destination_id LIMIT ?2",
    )
    .bind::<Nullable<Text>, _>(&text)
    .bind::<BigInt, _>(TOP)
    .load(conn)?;
    let limited: Vec<Counted> = diesel::sql_query(
        "SELECT t.destination_id AS name, count(*) AS n \
                 FROM attempts a JOIN tasks t ON t.id = a.task_id \
                 WHERE a.http_status = 429 AND a.recorded_at > ?1 \
                   AND (?2 IS NULL OR t.region = ?2) \
                 GROUP BY t.destination_id ORDER BY n DESC, t.destination_id LIMIT ?3",
    )
    .bind::<BigInt, _>(now - HOUR_MICROS)
    .bind::<Nullable<Text>, _>(&text)
    .bind::<BigInt, _>(TOP)
    .load(conn)?;
    let failures: Vec<Counted> = diesel::sql_query(
        "SELECT failure_reason AS name, count(*) AS n FROM task_failures \
                 WHERE failed_at > ?1 AND failed_at <= ?3 AND (?2 IS NULL OR region = ?2) \
                 GROUP BY failure_reason ORDER BY n DESC, failure_reason",
    )
    .bind::<BigInt, _>(now - 24 * HOUR_MICROS)
    .bind::<Nullable<Text>, _>(&text)
    .bind::<BigInt, _>(now)
    .load(conn)?;
    let failing: Vec<Counted> = diesel::sql_query(
        "SELECT destination_id AS name, count(*) AS n FROM task_failures \
                 WHERE failed_at > ?1 AND failed_at <= ?3 AND (?2 IS NULL OR region = ?2) \
                 GROUP BY destination_id ORDER BY n DESC, destination_id LIMIT ?4",
    )
    .bind::<BigInt, _>(now - 24 * HOUR_MICROS)
    .bind::<Nullable<Text>, _>(&text)
    .bind::<BigInt, _>(now)
    .bind::<BigInt, _>(TOP)
    .load(conn)?;
    let samples: Vec<Sample> = diesel::sql_query(
        "SELECT delivered_at - not_before AS micros FROM tasks \
                 WHERE state = 'delivered' AND finalized_at > ?1 AND (?2 IS NULL OR region = ?2)",
    )
    .bind::<BigInt, _>(now - HOUR_MICROS)
    .bind::<Nullable<Text>, _>(&text)
    .load(conn)?;
    let disabled: Vec<super::rows::DestinationRow> = diesel::sql_query(format!(
        "SELECT {} FROM destinations WHERE enabled = 0 AND (?1 IS NULL OR region = ?1) \
         AND deleted_at IS NULL ORDER BY id",
        super::rows::DESTINATION_COLUMNS
    ))
    .bind::<Nullable<Text>, _>(&text)
    .load(conn)?;
    let disabled = disabled
        .iter()
        .map(super::rows::DestinationRow::destination)
        .collect::<Result<_, StoreError>>()?;
    let paused = paused
        .into_iter()
        .map(|p| {
            let id = DestinationId::new(&p.id).map_err(|e| corrupt("destinations.id", e))?;
            Ok((
                id,
                region("destinations.region", &p.region)?,
                instant("destinations.paused_until", p.paused_until)?,
            ))
        })
        .collect::<Result<_, StoreError>>()?;
    let refused = refused
        .into_iter()
        .map(|r| {
            Ok(Refused {
                destination: DestinationId::new(&r.id)
                    .map_err(|e| corrupt("destinations.id", e))?,
                region: region("destinations.region", &r.region)?,
                why: r.refused,
                last: instant("destinations.refused_at", r.refused_at)?,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(StatusReport {
        now: ctx.now,
        regions,
        paused,
        refused,
        disabled,
        top_retry_wait: destinations(retry)?,
        top_rate_limited: destinations(limited)?,
        failures_last_day: failures.into_iter().map(|c| (c.name, c.n)).collect(),
        failures_by_destination_last_day: destinations(failing)?,
        deadline_to_delivery: Latency::of(samples.into_iter().map(|s| s.micros).collect()),
    })
}
