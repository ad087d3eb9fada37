//! The alert check on PostgreSQL (`store::Alerts`): one transaction under
//! the region's advisory lock (tried, not waited for: a second process of
//! the region skips its turn), which reads what the last check kept, runs
//! three bounded, indexed reads (the recorded failures, each destination's
//! live tasks not yet announced late in `task_queue_late`, the region's
//! live tasks whose horizon was not yet announced in
//! `task_queue_horizon_unseen`), hands them to `rules::alerts::fold`, and
//! writes the events, the marks and the windows back. It waits on nothing
//! but SQL.
//!
//! # Layout
//! - `alerts_sql`: the check's statements' text, for the test that
//!   plans them.
//! - `events`: the outbox of operational events the check and the
//!   disables write.

pub mod alerts_sql;
pub(super) mod events;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{
    Array, BigInt, Bool, Integer, Nullable, SmallInt, Text, Timestamptz, Uuid,
};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use self::alerts_sql::{HORIZON_SQL, LATE_SQL, MARK_HORIZON_SQL, MARK_LATE_SQL};
use super::store_now::now;
use super::tables::rows::{corrupt, DestinationRow, TaskRow};
use super::tables::schema::destinations;
use crate::domain::{
    Destination, DestinationEvent, DestinationId, EventKind, Region, Task, TaskId,
};
use crate::store::contract::{AlertCheck, Alerts, AlertsChecked, StoreError};
use crate::store::postgres::store::PgStore;
use crate::store::rules::alerts::{
    self, DestinationAlerts, FailedTask, Found, Held, Kept, LateScan, Plan, Window,
};

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

pub(super) async fn check(
    store: &PgStore,
    check: &AlertCheck,
) -> Result<AlertsChecked, StoreError> {
    let mut conn = store.conn().await?;
    let rule = store.disable_rule;
    conn.transaction::<_, StoreError, _>(async |conn| {
        let locked: Locked = diesel::sql_query(
            "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked",
        )
        .bind::<Text, _>(alerts::lock_name(check.region))
        .get_result(conn)
        .await?;
        if !locked.locked {
            return Ok(AlertsChecked {
                busy: true,
                ..AlertsChecked::default()
            });
        }
        let now = now(store, conn).await?;
        let dests: Vec<Destination> = destinations::table
            .filter(destinations::region.eq(check.region.as_str()))
            .select(DestinationRow::as_select())
            .load(conn)
            .await?
            .into_iter()
            .map(Destination::try_from)
            .collect::<Result<_, _>>()?;
        let kept = kept(conn, check).await?;
        let scans = alerts::late_scans(check, now, &dests);
        let found = Found {
            failed: failed(conn, check).await?,
            late: late(conn, &scans, check.batch).await?,
            horizon: if check.announce {
                horizon(conn, check, now).await?
            } else {
                Vec::new()
            },
        };
        let plan = alerts::fold(check, now, rule, &dests, &scans, kept, found);
        write(conn, check, &plan).await?;
        Ok(plan.checked)
    })
    .await
}

#[derive(QueryableByName)]
struct DestinationAlertsRow {
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    failing_since: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<SmallInt>)]
    failing_percent: Option<i16>,
}

#[derive(QueryableByName)]
struct WindowRow {
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_sent_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Text>)]
    held: Option<String>,
}

fn destination_id(column: &'static str, text: &str) -> Result<DestinationId, StoreError> {
    DestinationId::new(text).map_err(|e| corrupt(column, e))
}

async fn kept(conn: &mut AsyncPgConnection, check: &AlertCheck) -> Result<Kept, StoreError> {
    let region = check.region.as_str();
    let rows: Vec<DestinationAlertsRow> = diesel::sql_query(
        "SELECT destination_id, failing_since, failing_percent FROM destination_alerts \
         WHERE region = $1",
    )
    .bind::<Text, _>(region)
    .load(conn)
    .await?;
    let mut kept = Kept::default();
    for r in rows {
        let failing = match (r.failing_since, r.failing_percent) {
            (Some(since), Some(p)) => Some((
                since,
                u8::try_from(p).map_err(|e| corrupt("destination_alerts.failing_percent", e))?,
            )),
            _ => None,
        };
        kept.destinations.insert(
            destination_id("destination_alerts.destination_id", &r.destination_id)?,
            DestinationAlerts { failing },
        );
    }
    let windows: Vec<WindowRow> = diesel::sql_query(
        "SELECT destination_id, kind, last_sent_at, held FROM alert_windows WHERE region = $1",
    )
    .bind::<Text, _>(region)
    .load(conn)
    .await?;
    for w in windows {
        let kind =
            EventKind::parse(&w.kind).ok_or_else(|| corrupt("alert_windows.kind", &w.kind))?;
        kept.windows.insert(
            (
                destination_id("alert_windows.destination_id", &w.destination_id)?,
                kind,
            ),
            Window {
                last_sent: w.last_sent_at,
                held: w.held.as_deref().map(Held::from_text).transpose()?,
            },
        );
    }
    Ok(kept)
}

#[derive(QueryableByName)]
struct FailureRow {
    #[diesel(sql_type = Uuid)]
    task_id: uuid::Uuid,
    #[diesel(sql_type = Timestamptz)]
    failed_at: DateTime<Utc>,
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    tenant_id: String,
    #[diesel(sql_type = Text)]
    reminder_id: String,
    #[diesel(sql_type = Text)]
    failure_reason: String,
    #[diesel(sql_type = Integer)]
    attempt_count: i32,
    #[diesel(sql_type = Timestamptz)]
    not_before: DateTime<Utc>,
}

async fn failed(
    conn: &mut AsyncPgConnection,
    check: &AlertCheck,
) -> Result<Vec<FailedTask>, StoreError> {
    let rows: Vec<FailureRow> = diesel::sql_query(
        "SELECT task_id, failed_at, destination_id, tenant_id, reminder_id, failure_reason, \
         attempt_count, not_before FROM failures_to_announce WHERE region = $1 \
         ORDER BY failed_at, task_id LIMIT $2",
    )
    .bind::<Text, _>(check.region.as_str())
    .bind::<BigInt, _>(i64::from(check.batch))
    .load(conn)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(FailedTask {
                task_id: TaskId(r.task_id),
                failed_at: r.failed_at,
                destination: destination_id(
                    "failures_to_announce.destination_id",
                    &r.destination_id,
                )?,
                tenant_id: r.tenant_id,
                reminder_id: r.reminder_id,
                reason: r.failure_reason,
                attempts: r.attempt_count,
                not_before: r.not_before,
            })
        })
        .collect()
}

async fn late(
    conn: &mut AsyncPgConnection,
    scans: &[LateScan],
    batch: u32,
) -> Result<Vec<Task>, StoreError> {
    if scans.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = scans.iter().map(|s| s.destination.as_str()).collect();
    let cutoffs: Vec<DateTime<Utc>> = scans.iter().map(|s| s.cutoff).collect();
    let rows: Vec<TaskRow> = diesel::sql_query(LATE_SQL)
        .bind::<Array<Text>, _>(ids)
        .bind::<Array<Timestamptz>, _>(cutoffs)
        .bind::<BigInt, _>(i64::from(batch))
        .load(conn)
        .await?;
    rows.into_iter().map(Task::try_from).collect()
}

async fn horizon(
    conn: &mut AsyncPgConnection,
    check: &AlertCheck,
    now: DateTime<Utc>,
) -> Result<Vec<Task>, StoreError> {
    let rows: Vec<TaskRow> = diesel::sql_query(HORIZON_SQL)
        .bind::<Text, _>(check.region.as_str())
        .bind::<Timestamptz, _>(alerts::horizon_until(check, now))
        .bind::<BigInt, _>(i64::from(check.batch))
        .load(conn)
        .await?;
    rows.into_iter().map(Task::try_from).collect()
}

async fn write(
    conn: &mut AsyncPgConnection,
    check: &AlertCheck,
    plan: &Plan,
) -> Result<(), StoreError> {
    let region = check.region.as_str();
    if !plan.failures_done.is_empty() {
        let (ids, at): (Vec<uuid::Uuid>, Vec<DateTime<Utc>>) = plan
            .failures_done
            .iter()
            .map(|(id, at)| (id.0, *at))
            .unzip();
        diesel::sql_query(
            "DELETE FROM failures_to_announce f USING unnest($1::uuid[], $2::timestamptz[]) \
             AS d(task_id, failed_at) WHERE f.task_id = d.task_id AND f.failed_at = d.failed_at",
        )
        .bind::<Array<Uuid>, _>(ids)
        .bind::<Array<Timestamptz>, _>(at)
        .execute(conn)
        .await?;
    }
    for e in &plan.events {
        diesel::sql_query(
            "INSERT INTO destination_events (id, kind, destination_id, region, reason, at, \
             last_error, data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind::<Uuid, _>(e.id)
        .bind::<Text, _>(e.kind.as_str())
        .bind::<Text, _>(e.destination.as_str())
        .bind::<Text, _>(e.region.as_str())
        .bind::<Nullable<Text>, _>(&e.reason)
        .bind::<Timestamptz, _>(e.at)
        .bind::<Nullable<Text>, _>(&e.last_error)
        .bind::<Nullable<Text>, _>(&e.data)
        .execute(conn)
        .await?;
    }
    for (d, a) in &plan.destinations {
        diesel::sql_query(
            "INSERT INTO destination_alerts (destination_id, region, failing_since, \
             failing_percent) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (destination_id) DO UPDATE SET \
             failing_since = EXCLUDED.failing_since, failing_percent = EXCLUDED.failing_percent",
        )
        .bind::<Text, _>(d.as_str())
        .bind::<Text, _>(region)
        .bind::<Nullable<Timestamptz>, _>(a.failing.map(|(since, _)| since))
        .bind::<Nullable<SmallInt>, _>(a.failing.map(|(_, p)| i16::from(p)))
        .execute(conn)
        .await?;
    }
    for (d, kind, w) in &plan.windows {
        diesel::sql_query(
            "INSERT INTO alert_windows (destination_id, kind, region, last_sent_at, held) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (destination_id, kind) DO UPDATE SET \
             last_sent_at = EXCLUDED.last_sent_at, held = EXCLUDED.held",
        )
        .bind::<Text, _>(d.as_str())
        .bind::<Text, _>(kind.as_str())
        .bind::<Text, _>(region)
        .bind::<Nullable<Timestamptz>, _>(w.last_sent)
        .bind::<Nullable<Text>, _>(w.held.as_ref().map(Held::to_text))
        .execute(conn)
        .await?;
    }
    for (sql, seen) in [
        (MARK_LATE_SQL, &plan.late_seen),
        (MARK_HORIZON_SQL, &plan.horizon_seen),
    ] {
        if seen.is_empty() {
            continue;
        }
        let (ids, at): (Vec<uuid::Uuid>, Vec<DateTime<Utc>>) =
            seen.iter().map(|(id, at)| (id.0, *at)).unzip();
        diesel::sql_query(sql)
            .bind::<Array<Uuid>, _>(ids)
            .bind::<Array<Timestamptz>, _>(at)
            .execute(conn)
            .await?;
    }
    Ok(())
}

impl Alerts for PgStore {
    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        events::events(self, region, limit).await
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        events::forget(self, ids).await
    }

    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        self::check(self, check).await
    }
}
