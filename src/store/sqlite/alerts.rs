//! The alert check on SQLite (`store::Alerts`): one `BEGIN IMMEDIATE`
//! transaction, so two processes on one file take turns and the second
//! reads what the first kept. The same reads as PostgreSQL's, on partial
//! indexes of the live tasks without the check's marks (`tasks_late_check`
//! by destination and deadline, `tasks_horizon_check` by region and
//! horizon), handed to `rules::alerts::fold`, and the plan (events,
//! windows, marks) written back.

use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryableByName, RunQueryDsl};

use super::destination_rows;
use super::rows::{
    self, instant, maybe, micros, uuid, DestinationRow, TaskRow, DESTINATION_COLUMNS, TASK_COLUMNS,
};
use super::store::SqliteStore;
use crate::domain::{
    Destination, DestinationEvent, DestinationId, EventKind, Region, Task, TaskId,
};
use crate::policy::DisableRule;
use crate::store::contract::{AlertCheck, Alerts, AlertsChecked, StoreError};
use crate::store::rules::alerts::{
    self, DestinationAlerts, FailedTask, Found, Held, Kept, LateScan, Plan, Window,
};
use crate::store::rules::columns::corrupt;

impl SqliteStore {
    pub(super) async fn check_alerts_on_file(
        &self,
        check: &AlertCheck,
    ) -> Result<AlertsChecked, StoreError> {
        let check = check.clone();
        let rule = self.disable_rule;
        self.run(true, move |conn, ctx| {
            run_check(conn, &check, ctx.now, rule)
        })
        .await
    }
}

fn run_check(
    conn: &mut SqliteConnection,
    check: &AlertCheck,
    now: DateTime<Utc>,
    rule: DisableRule,
) -> Result<AlertsChecked, StoreError> {
    let rows: Vec<DestinationRow> = diesel::sql_query(format!(
        "SELECT {DESTINATION_COLUMNS} FROM destinations WHERE region = ? ORDER BY id"
    ))
    .bind::<Text, _>(check.region.as_str())
    .load(conn)?;
    let dests: Vec<Destination> = rows
        .iter()
        .map(DestinationRow::destination)
        .collect::<Result<_, _>>()?;
    let kept = kept(conn, check)?;
    let scans = alerts::late_scans(check, now, &dests);
    let found = Found {
        failed: failed(conn, check)?,
        late: late(conn, &scans, check.batch)?,
        horizon: if check.announce {
            horizon(conn, check, now)?
        } else {
            Vec::new()
        },
    };
    let plan = alerts::fold(check, now, rule, &dests, &scans, kept, found);
    write(conn, check, &plan)?;
    Ok(plan.checked)
}

#[derive(QueryableByName)]
struct DestinationAlertsRow {
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    failing_since: Option<i64>,
    #[diesel(sql_type = Nullable<Integer>)]
    failing_percent: Option<i32>,
}

#[derive(QueryableByName)]
struct WindowRow {
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    last_sent_at: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    held: Option<String>,
}

fn destination_id(column: &'static str, text: &str) -> Result<DestinationId, StoreError> {
    DestinationId::new(text).map_err(|e| corrupt(column, e))
}

fn kept(conn: &mut SqliteConnection, check: &AlertCheck) -> Result<Kept, StoreError> {
    let region = check.region.as_str();
    let rows: Vec<DestinationAlertsRow> = diesel::sql_query(
        "SELECT destination_id, failing_since, failing_percent FROM destination_alerts \
         WHERE region = ?",
    )
    .bind::<Text, _>(region)
    .load(conn)?;
    let mut kept = Kept::default();
    for r in rows {
        let failing = match (r.failing_since, r.failing_percent) {
            (Some(since), Some(p)) => Some((
                instant("destination_alerts.failing_since", since)?,
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
        "SELECT destination_id, kind, last_sent_at, held FROM alert_windows WHERE region = ?",
    )
    .bind::<Text, _>(region)
    .load(conn)?;
    for w in windows {
        let kind =
            EventKind::parse(&w.kind).ok_or_else(|| corrupt("alert_windows.kind", &w.kind))?;
        kept.windows.insert(
            (
                destination_id("alert_windows.destination_id", &w.destination_id)?,
                kind,
            ),
            Window {
                last_sent: maybe("alert_windows.last_sent_at", w.last_sent_at)?,
                held: w.held.as_deref().map(Held::from_text).transpose()?,
            },
        );
    }
    Ok(kept)
}

#[derive(QueryableByName)]
struct FailureRow {
    #[diesel(sql_type = Text)]
    task_id: String,
    #[diesel(sql_type = BigInt)]
    failed_at: i64,
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
    #[diesel(sql_type = BigInt)]
    not_before: i64,
}

fn failed(conn: &mut SqliteConnection, check: &AlertCheck) -> Result<Vec<FailedTask>, StoreError> {
    let rows: Vec<FailureRow> = diesel::sql_query(
        "SELECT task_id, failed_at, destination_id, tenant_id, reminder_id, failure_reason, \
         attempt_count, not_before FROM failures_to_announce WHERE region = ? \
         ORDER BY failed_at, task_id LIMIT ?",
    )
    .bind::<Text, _>(check.region.as_str())
    .bind::<BigInt, _>(i64::from(check.batch))
    .load(conn)?;
    rows.into_iter()
        .map(|r| {
            Ok(FailedTask {
                task_id: TaskId(uuid("failures_to_announce.task_id", &r.task_id)?),
                failed_at: instant("failures_to_announce.failed_at", r.failed_at)?,
                destination: destination_id(
                    "failures_to_announce.destination_id",
                    &r.destination_id,
                )?,
                tenant_id: r.tenant_id,
                reminder_id: r.reminder_id,
                reason: r.failure_reason,
                attempts: r.attempt_count,
                not_before: instant("failures_to_announce.not_before", r.not_before)?,
            })
        })
        .collect()
}

/// Each destination's live tasks not yet announced late, one indexed read
/// each (`tasks_late_check`, whose WHERE this repeats).
fn late(
    conn: &mut SqliteConnection,
    scans: &[LateScan],
    batch: u32,
) -> Result<Vec<Task>, StoreError> {
    let mut found = Vec::new();
    for s in scans {
        let rows: Vec<TaskRow> = diesel::sql_query(format!(
            "SELECT {TASK_COLUMNS} FROM tasks \
             WHERE destination_id = ? AND finalized_at IS NULL AND late_seen = 0 \
               AND not_before <= ? \
             ORDER BY not_before, id LIMIT ?"
        ))
        .bind::<Text, _>(s.destination.as_str())
        .bind::<BigInt, _>(micros(s.cutoff))
        .bind::<BigInt, _>(i64::from(batch))
        .load(conn)?;
        found.extend(rows::tasks(rows)?);
    }
    Ok(found)
}

/// The region's live tasks whose horizon comes within the warning and was
/// not yet announced (`tasks_horizon_check`, whose WHERE this repeats).
fn horizon(
    conn: &mut SqliteConnection,
    check: &AlertCheck,
    now: DateTime<Utc>,
) -> Result<Vec<Task>, StoreError> {
    let rows: Vec<TaskRow> = diesel::sql_query(format!(
        "SELECT {TASK_COLUMNS} FROM tasks \
         WHERE region = ? AND finalized_at IS NULL AND horizon_seen = 0 \
           AND retry_horizon_at <= ? \
         ORDER BY retry_horizon_at, id LIMIT ?"
    ))
    .bind::<Text, _>(check.region.as_str())
    .bind::<BigInt, _>(micros(alerts::horizon_until(check, now)))
    .bind::<BigInt, _>(i64::from(check.batch))
    .load(conn)?;
    rows::tasks(rows)
}

fn write(conn: &mut SqliteConnection, check: &AlertCheck, plan: &Plan) -> Result<(), StoreError> {
    let region = check.region.as_str();
    for (id, at) in &plan.failures_done {
        diesel::sql_query("DELETE FROM failures_to_announce WHERE task_id = ? AND failed_at = ?")
            .bind::<Text, _>(id.0.to_string())
            .bind::<BigInt, _>(micros(*at))
            .execute(conn)?;
    }
    for e in &plan.events {
        diesel::sql_query(
            "INSERT OR IGNORE INTO destination_events (id, kind, destination_id, region, reason, \
             at, last_error, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind::<Text, _>(e.id.to_string())
        .bind::<Text, _>(e.kind.as_str())
        .bind::<Text, _>(e.destination.as_str())
        .bind::<Text, _>(e.region.as_str())
        .bind::<Nullable<Text>, _>(&e.reason)
        .bind::<BigInt, _>(micros(e.at))
        .bind::<Nullable<Text>, _>(&e.last_error)
        .bind::<Nullable<Text>, _>(&e.data)
        .execute(conn)?;
    }
    for (d, a) in &plan.destinations {
        diesel::sql_query(
            "INSERT INTO destination_alerts (destination_id, region, failing_since, \
             failing_percent) VALUES (?, ?, ?, ?) \
             ON CONFLICT (destination_id) DO UPDATE SET \
             failing_since = excluded.failing_since, failing_percent = excluded.failing_percent",
        )
        .bind::<Text, _>(d.as_str())
        .bind::<Text, _>(region)
        .bind::<Nullable<BigInt>, _>(a.failing.map(|(since, _)| micros(since)))
        .bind::<Nullable<Integer>, _>(a.failing.map(|(_, p)| i32::from(p)))
        .execute(conn)?;
    }
    for (d, kind, w) in &plan.windows {
        diesel::sql_query(
            "INSERT INTO alert_windows (destination_id, kind, region, last_sent_at, held) \
             VALUES (?, ?, ?, ?, ?) ON CONFLICT (destination_id, kind) DO UPDATE SET \
             last_sent_at = excluded.last_sent_at, held = excluded.held",
        )
        .bind::<Text, _>(d.as_str())
        .bind::<Text, _>(kind.as_str())
        .bind::<Text, _>(region)
        .bind::<Nullable<BigInt>, _>(w.last_sent.map(micros))
        .bind::<Nullable<Text>, _>(w.held.as_ref().map(Held::to_text))
        .execute(conn)?;
    }
    let marks = [
        ("late_seen", "not_before", &plan.late_seen),
        ("horizon_seen", "retry_horizon_at", &plan.horizon_seen),
    ];
    for (column, at_column, seen) in marks {
        for (id, at) in seen {
            diesel::sql_query(format!(
                "UPDATE tasks SET {column} = 1 WHERE id = ? AND {at_column} = ?"
            ))
            .bind::<Text, _>(id.0.to_string())
            .bind::<BigInt, _>(micros(*at))
            .execute(conn)?;
        }
    }
    Ok(())
}

impl Alerts for SqliteStore {
    async fn check_alerts(&self, check: &AlertCheck) -> Result<AlertsChecked, StoreError> {
        self.check_alerts_on_file(check).await
    }

    async fn destination_events(
        &self,
        region: Region,
        limit: u32,
    ) -> Result<Vec<DestinationEvent>, StoreError> {
        self.run(false, move |conn, _| {
            destination_rows::events(conn, region, limit)
        })
        .await
    }

    async fn forget_destination_events(&self, ids: &[uuid::Uuid]) -> Result<u64, StoreError> {
        let ids = ids.to_vec();
        self.run(true, move |conn, _| {
            destination_rows::forget_events(conn, &ids)
        })
        .await
    }
}
