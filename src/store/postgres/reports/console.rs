//! The console's reads on PostgreSQL (see `store::console`); the
//! statements are in `console_sql`.

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Double, Integer, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;

use super::super::tables::rows::{DestinationRow, TaskRow};
use super::console_sql::{self, SearchParam};
use crate::domain::{Destination, Region, Task, TaskId};
use crate::store::contract::console::{
    Activity, DestinationSummary, LearnedQuota, TaskFilter, TaskPage,
};
use crate::store::contract::{Latency, StoreError};
use crate::store::postgres::store::PgStore;

pub(in crate::store) async fn search_tasks(
    store: &PgStore,
    region: Region,
    filter: &TaskFilter,
    before: Option<TaskId>,
    limit: u32,
) -> Result<TaskPage, StoreError> {
    let (sql, params) = console_sql::search_tasks(region, filter, before, i64::from(limit) + 1);
    let mut query = diesel::sql_query(sql).into_boxed::<Pg>();
    for param in params {
        query = match param {
            SearchParam::Text(t) => query.bind::<Text, _>(t),
            SearchParam::Texts(ts) => query.bind::<Array<Text>, _>(ts),
            SearchParam::Uuid(u) => query.bind::<diesel::sql_types::Uuid, _>(u),
            SearchParam::Time(t) => query.bind::<Timestamptz, _>(t),
            SearchParam::BigInt(n) => query.bind::<BigInt, _>(n),
        };
    }
    let mut conn = store.conn().await?;
    let rows: Vec<TaskRow> = query.load(&mut conn).await?;
    let tasks = rows
        .into_iter()
        .map(Task::try_from)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(crate::store::contract::console::page(tasks, limit))
}

#[derive(QueryableByName)]
struct SummaryRow {
    #[diesel(sql_type = Text)]
    destination: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    quota_limit: Option<i64>,
    #[diesel(sql_type = Nullable<Double>)]
    quota_remaining: Option<f64>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    quota_resets_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    quota_learned_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = BigInt)]
    in_flight: i64,
    #[diesel(sql_type = BigInt)]
    due_backlog: i64,
    #[diesel(sql_type = BigInt)]
    rate_limited: i64,
    #[diesel(sql_type = BigInt)]
    failed: i64,
    #[diesel(sql_type = BigInt)]
    retrying: i64,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    oldest_due: Option<DateTime<Utc>>,
}

/// The destinations and their counts from one snapshot, so they agree.
pub(in crate::store) async fn destination_summaries(
    store: &PgStore,
    region: Region,
) -> Result<Vec<DestinationSummary>, StoreError> {
    let mut conn = store.conn().await?;
    let now = store.clock.now_param();
    conn.build_transaction()
        .read_only()
        .repeatable_read()
        .run::<_, StoreError, _>(async |conn| {
            use super::super::tables::schema::destinations;
            let rows: Vec<DestinationRow> = destinations::table
                .filter(destinations::region.eq(region.as_str()))
                .filter(destinations::deleted_at.is_null())
                .select(DestinationRow::as_select())
                .order(destinations::id)
                .load(conn)
                .await?;
            let counts: Vec<SummaryRow> = diesel::sql_query(console_sql::DESTINATION_SUMMARIES)
                .bind::<Nullable<Timestamptz>, _>(now)
                .bind::<Text, _>(region.as_str())
                .load(conn)
                .await?;
            let mut counts: std::collections::HashMap<String, SummaryRow> = counts
                .into_iter()
                .map(|c| (c.destination.clone(), c))
                .collect();
            rows.into_iter()
                .map(|row| {
                    let destination = Destination::try_from(row)?;
                    let c = counts.remove(destination.id.as_str());
                    Ok(summary(destination, c))
                })
                .collect()
        })
        .await
}

fn summary(destination: Destination, counts: Option<SummaryRow>) -> DestinationSummary {
    let Some(c) = counts else {
        return DestinationSummary {
            destination,
            learned_quota: None,
            in_flight: 0,
            due_backlog: 0,
            rate_limited_last_hour: 0,
            failed_last_hour: 0,
            retrying: 0,
            oldest_due: None,
        };
    };
    let learned_quota = match (c.quota_remaining, c.quota_resets_at, c.quota_learned_at) {
        (Some(remaining), Some(resets_at), Some(learned_at)) => Some(LearnedQuota {
            limit: c.quota_limit,
            remaining,
            resets_at,
            learned_at,
        }),
        _ => None,
    };
    DestinationSummary {
        destination,
        learned_quota,
        in_flight: c.in_flight,
        due_backlog: c.due_backlog,
        rate_limited_last_hour: c.rate_limited,
        failed_last_hour: c.failed,
        retrying: c.retrying,
        oldest_due: c.oldest_due,
    }
}

#[derive(QueryableByName)]
struct EndedRow {
    #[diesel(sql_type = Integer)]
    minute: i32,
    #[diesel(sql_type = BigInt)]
    delivered: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    p50: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    p99: Option<i64>,
}

#[derive(QueryableByName)]
struct MinuteCount {
    #[diesel(sql_type = Integer)]
    minute: i32,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct ReasonCount {
    #[diesel(sql_type = Text)]
    reason: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
}

/// The last hour from one snapshot, so every part has the same `now`.
pub(in crate::store) async fn activity(
    store: &PgStore,
    region: Region,
) -> Result<Activity, StoreError> {
    let mut conn = store.conn().await?;
    let now_param = store.clock.now_param();
    conn.build_transaction()
        .read_only()
        .repeatable_read()
        .run::<_, StoreError, _>(async |conn| {
            let now: Now = diesel::sql_query("SELECT coalesce($1, now()) AS now")
                .bind::<Nullable<Timestamptz>, _>(now_param)
                .get_result(conn)
                .await?;
            // now() is the transaction's start, so the later statements
            // see the same instant without being told.
            let ended: Vec<EndedRow> = diesel::sql_query(console_sql::ACTIVITY_ENDED)
                .bind::<Nullable<Timestamptz>, _>(now_param)
                .bind::<Text, _>(region.as_str())
                .load(conn)
                .await?;
            let failed: Vec<MinuteCount> = diesel::sql_query(console_sql::ACTIVITY_FAILED)
                .bind::<Nullable<Timestamptz>, _>(now_param)
                .bind::<Text, _>(region.as_str())
                .load(conn)
                .await?;
            let limited: Vec<MinuteCount> = diesel::sql_query(console_sql::ACTIVITY_RATE_LIMITED)
                .bind::<Nullable<Timestamptz>, _>(now_param)
                .bind::<Text, _>(region.as_str())
                .load(conn)
                .await?;
            let failures: Vec<ReasonCount> = diesel::sql_query(console_sql::ACTIVITY_FAILURES)
                .bind::<Nullable<Timestamptz>, _>(now_param)
                .bind::<Text, _>(region.as_str())
                .load(conn)
                .await?;
            let mut minutes = crate::store::contract::console::empty_hour(now.now);
            for row in ended {
                if let Some(m) = usize::try_from(row.minute)
                    .ok()
                    .and_then(|i| minutes.get_mut(i))
                {
                    m.delivered = row.delivered;
                    m.deadline_to_delivery = Latency::from_micros(row.delivered, row.p50, row.p99);
                }
            }
            for row in failed {
                if let Some(m) = usize::try_from(row.minute)
                    .ok()
                    .and_then(|i| minutes.get_mut(i))
                {
                    m.failed = row.n;
                }
            }
            for row in limited {
                if let Some(m) = usize::try_from(row.minute)
                    .ok()
                    .and_then(|i| minutes.get_mut(i))
                {
                    m.rate_limited = row.n;
                }
            }
            Ok(Activity {
                now: now.now,
                minutes,
                failures_by_reason: failures.into_iter().map(|r| (r.reason, r.n)).collect(),
            })
        })
        .await
}
