//! Each destination's hours in the embedded file (`destination_stats`):
//! the finish counts its batch into them inside its own transaction
//! (`count`), the API and the console read them, the Pruner deletes the
//! old ones. A histogram is a blob of its bucket counts, each a 4-byte
//! little-endian unsigned integer.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{OptionalExtension, QueryableByName, RunQueryDsl};

use super::rows::{instant, micros};
use super::store::SqliteStore;
use crate::domain::{
    hour_of, AttemptCounts, DestinationHour, DestinationId, Histogram, PruneRequest, Region,
};
use crate::store::contract::StoreError;
use crate::store::rules::columns::corrupt;

const COLUMNS: &str = "hour, succeeded, transport, timeout, client_error, rate_limited, \
                       server_error, other_status, latency, lateness";

#[derive(QueryableByName)]
struct HourRow {
    #[diesel(sql_type = BigInt)]
    hour: i64,
    #[diesel(sql_type = BigInt)]
    succeeded: i64,
    #[diesel(sql_type = BigInt)]
    transport: i64,
    #[diesel(sql_type = BigInt)]
    timeout: i64,
    #[diesel(sql_type = BigInt)]
    client_error: i64,
    #[diesel(sql_type = BigInt)]
    rate_limited: i64,
    #[diesel(sql_type = BigInt)]
    server_error: i64,
    #[diesel(sql_type = BigInt)]
    other_status: i64,
    #[diesel(sql_type = Binary)]
    latency: Vec<u8>,
    #[diesel(sql_type = Binary)]
    lateness: Vec<u8>,
}

impl TryFrom<HourRow> for DestinationHour {
    type Error = StoreError;

    fn try_from(row: HourRow) -> Result<Self, StoreError> {
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        Ok(DestinationHour {
            hour: instant("destination_stats.hour", row.hour)?,
            counts: AttemptCounts {
                succeeded: count(row.succeeded),
                transport: count(row.transport),
                timeout: count(row.timeout),
                client_error: count(row.client_error),
                rate_limited: count(row.rate_limited),
                server_error: count(row.server_error),
                other_status: count(row.other_status),
            },
            latency: histogram("destination_stats.latency", &row.latency)?,
            lateness: histogram("destination_stats.lateness", &row.lateness)?,
        })
    }
}

fn histogram(column: &'static str, blob: &[u8]) -> Result<Histogram, StoreError> {
    let counts: Vec<u32> = blob
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Histogram::from_counts(&counts).ok_or_else(|| corrupt(column, format!("{} bytes", blob.len())))
}

fn blob(histogram: &Histogram) -> Vec<u8> {
    histogram
        .counts()
        .iter()
        .flat_map(|c| c.to_le_bytes())
        .collect()
}

fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Adds a finish batch's hours to what the file holds, in the finish's
/// transaction: each destination's row for the hour is read, added to and
/// written back under the write lock.
pub(super) fn count(
    conn: &mut SqliteConnection,
    batch: BTreeMap<DestinationId, DestinationHour>,
) -> Result<(), StoreError> {
    for (id, mut hour) in batch {
        let stored: Option<HourRow> = diesel::sql_query(format!(
            "SELECT {COLUMNS} FROM destination_stats WHERE destination_id = ? AND hour = ?"
        ))
        .bind::<Text, _>(id.as_str())
        .bind::<BigInt, _>(micros(hour.hour))
        .get_result(conn)
        .optional()?;
        if let Some(stored) = stored {
            hour.merge(&DestinationHour::try_from(stored)?);
        }
        let c = &hour.counts;
        diesel::sql_query(
            "INSERT OR REPLACE INTO destination_stats (destination_id, hour, succeeded, \
             transport, timeout, client_error, rate_limited, server_error, other_status, \
             latency, lateness) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind::<Text, _>(id.as_str())
        .bind::<BigInt, _>(micros(hour.hour))
        .bind::<BigInt, _>(signed(c.succeeded))
        .bind::<BigInt, _>(signed(c.transport))
        .bind::<BigInt, _>(signed(c.timeout))
        .bind::<BigInt, _>(signed(c.client_error))
        .bind::<BigInt, _>(signed(c.rate_limited))
        .bind::<BigInt, _>(signed(c.server_error))
        .bind::<BigInt, _>(signed(c.other_status))
        .bind::<Binary, _>(blob(&hour.latency))
        .bind::<Binary, _>(blob(&hour.lateness))
        .execute(conn)?;
    }
    Ok(())
}

impl SqliteStore {
    pub(in crate::store) async fn read_destination_stats(
        &self,
        id: &DestinationId,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DestinationHour>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, _| {
            let rows: Vec<HourRow> = diesel::sql_query(format!(
                "SELECT {COLUMNS} FROM destination_stats \
                 WHERE destination_id = ? AND hour >= ? AND hour < ? ORDER BY hour"
            ))
            .bind::<Text, _>(id.as_str())
            .bind::<BigInt, _>(micros(hour_of(since)))
            .bind::<BigInt, _>(micros(until))
            .load(conn)?;
            rows.into_iter().map(DestinationHour::try_from).collect()
        })
        .await
    }

    pub(in crate::store) async fn prune_stats(
        &self,
        region: Option<Region>,
        older_than: Duration,
    ) -> Result<u64, StoreError> {
        let older_than = older_than.min(Duration::days(PruneRequest::MAX_AGE_DAYS));
        self.run(true, move |conn, ctx| {
            // An hour goes once its end is older than the age.
            let cutoff = ctx.now - older_than - Duration::hours(1);
            let n = diesel::sql_query(
                "DELETE FROM destination_stats WHERE hour < ?1 AND destination_id IN \
                 (SELECT id FROM destinations WHERE ?2 IS NULL OR region = ?2)",
            )
            .bind::<BigInt, _>(micros(cutoff))
            .bind::<Nullable<Text>, _>(region.as_ref().map(|r| r.as_str().to_owned()))
            .execute(conn)?;
            // The failure log is kept as long as the hours.
            diesel::sql_query(
                "DELETE FROM task_failures WHERE failed_at < ?1 AND (?2 IS NULL OR region = ?2)",
            )
            .bind::<BigInt, _>(micros(ctx.now - older_than))
            .bind::<Nullable<Text>, _>(region.as_ref().map(|r| r.as_str().to_owned()))
            .execute(conn)?;
            Ok(n as u64)
        })
        .await
    }
}
